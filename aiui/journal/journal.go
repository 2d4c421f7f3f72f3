package journal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hubdev/hub/aiui/jsonstr"
	"github.com/hubdev/hub/hub"
)

// compactRatio: a compaction runs once the dead bytes exceed this many
// times the live ones (a dead share over 75%). Each compaction copies the
// live bytes once, so appends pay 1/compactRatio of a copy per byte on top
// of their write: at 1 the compactions cost as much CPU as the appends
// (measured), at 3 a third, for a file of at most 4× the live bytes.
const compactRatio = 3

// Entry is one live prompt as memory keeps it: what routing needs and
// where its line is. The text stays in the file.
type Entry struct {
	ID   string
	Seq  int64
	Root string
	// To is who took the prompt: "" while pending, "shell", "mcp:<face>".
	To string

	off, n int64 // its prompt line (n without the '\n')
	toN    int64 // length of its latest "to" line, 0 if none
	legacy bool  // its line is re-encoded by the next compaction
}

// handle is an open record file, reference counted so a reader streaming
// a prompt outside the journal's lock keeps the file it started on even
// when a compaction replaces it meanwhile.
type handle struct {
	f    *os.File
	refs atomic.Int32
}

func newHandle(f *os.File) *handle {
	h := &handle{f: f}
	h.refs.Store(1)
	return h
}

func (h *handle) release() {
	if h.refs.Add(-1) == 0 {
		h.f.Close()
	}
}

// Journal is an open prompt record. It is not safe for concurrent use:
// the caller serialises every call (the outbox holds its mutex), and
// every mutation runs between Begin and End.
type Journal struct {
	path string
	lk   *fileLock

	h    *handle
	fi   os.FileInfo // identity of h's file
	end  int64       // bytes of the file folded into the view
	torn bool        // bytes past end are an unterminated line to terminate before appending

	entries []*Entry
	byID    map[string]*Entry
	live    int64 // bytes of live lines: prompts, plus each one's latest "to" line
	prompts int64 // bytes of live prompt lines (what MaxBytes bounds)
	maxSeq  int64
	pending int
	rewrite bool // some live line must be re-encoded

	// Limit and MaxBytes bound the live prompts in count and bytes (0:
	// unbounded); the oldest fall out first (the newest always stays).
	Limit    int
	MaxBytes int64
	// OnDrop is told of each prompt a new one pushes out of the bounds.
	OnDrop func(*Entry)
	// Now stamps delivered prompts (time.Now when nil).
	Now func() time.Time

	locked  bool
	closed  bool
	out     []byte // event lines to append at End
	compact int64  // next size at which a failed compaction is retried
}

// Open opens (creating, 0600) the record at path and folds it into memory.
func Open(path string, limit int, maxBytes int64) (*Journal, error) {
	lk, err := openLock(path + ".lock")
	if err != nil {
		return nil, err
	}
	j := &Journal{path: path, lk: lk, Limit: limit, MaxBytes: maxBytes}
	if err := j.Begin(); err != nil {
		lk.close()
		return nil, err
	}
	// under the lock nobody is compacting: a temporary file is a leftover
	if stale, _ := filepath.Glob(path + ".tmp-*"); len(stale) > 0 {
		for _, s := range stale {
			os.Remove(s)
		}
	}
	j.End()
	return j, nil
}

// Close releases the file (readers still streaming keep theirs); later
// calls fail to Begin.
func (j *Journal) Close() error {
	if j.h != nil {
		j.h.release()
		j.h = nil
	}
	if j.closed {
		return nil
	}
	j.closed = true
	return j.lk.close()
}

// Begin takes the record's lock and folds in what other processes did
// since: their appends, or the whole file again after they compacted it.
func (j *Journal) Begin() error {
	if j.closed {
		return errors.New("the prompt record is closed")
	}
	if err := j.lk.lock(); err != nil {
		return fmt.Errorf("lock the prompt record: %w", err)
	}
	j.locked = true
	if err := j.sync(); err != nil {
		j.lk.unlock()
		j.locked = false
		return err
	}
	return nil
}

// End writes the event lines queued since Begin, applies the bounds,
// compacts when due and releases the lock. Write errors are returned
// after the lock is released; memory keeps the state regardless.
func (j *Journal) End() error {
	if !j.locked {
		return nil
	}
	defer func() { j.lk.unlock(); j.locked = false }()
	j.trim()
	err := j.flush()
	if dead := j.end - j.live; (dead > compactRatio*j.live || j.rewrite) && j.end >= j.compact {
		if cerr := j.compactNow(); cerr != nil {
			j.compact = j.end + max(j.live, 64<<10) // retry once the file has grown
			err = errors.Join(err, cerr)
		}
	}
	return err
}

// sync brings the view up to date with the file on disk. Caller holds the
// lock.
func (j *Journal) sync() error {
	fi, err := os.Stat(j.path)
	if err != nil || j.h == nil || !os.SameFile(fi, j.fi) || fi.Size() < j.end {
		return j.reload()
	}
	if fi.Size() > j.end {
		j.ingest(fi.Size())
	}
	return nil
}

// reload reopens the file and rebuilds the view from its first byte.
func (j *Journal) reload() error {
	f, err := os.OpenFile(j.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open the prompt record: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if j.h != nil {
		j.h.release()
	}
	j.h, j.fi = newHandle(f), fi
	j.end, j.torn, j.live, j.prompts, j.pending, j.rewrite = 0, false, 0, 0, 0, false
	j.entries, j.byID = nil, map[string]*Entry{}
	j.ingest(fi.Size())
	return nil
}

// ingest folds the file's lines from end to size into the view.
func (j *Journal) ingest(size int64) {
	s := newScanner(j.h.f, j.end, size)
	for {
		l, st := s.next()
		switch st {
		case scanEnd:
			j.end, j.torn = size, false
			return
		case scanTorn:
			j.end, j.torn = l.off, true
			return
		}
		j.apply(&l)
	}
}

// apply folds one complete line into the view.
func (j *Journal) apply(l *line) {
	switch l.kind {
	case promptLine:
		e := &Entry{ID: l.h.ID, Seq: l.h.Seq, Root: l.h.Root, off: l.off, n: l.n, legacy: l.legacy}
		if l.h.DeliveredTo != nil {
			e.To = *l.h.DeliveredTo
		}
		if e.ID == "" || j.byID[e.ID] != nil {
			// an old record without ids, or a copied line: give it its own
			// id, which the next compaction writes into its line
			e.ID, e.legacy = hub.RandomHex(8), true
		}
		j.rewrite = j.rewrite || e.legacy
		j.entries = append(j.entries, e)
		j.byID[e.ID] = e
		j.live += l.n + 1
		j.prompts += l.n + 1
		j.maxSeq = max(j.maxSeq, e.Seq)
		if e.To == "" {
			j.pending++
		}
	case toEvent:
		if e := j.byID[l.h.ID]; e != nil {
			j.live += l.n + 1 - e.toN
			e.toN = l.n + 1
			j.setTo(e, l.h.To)
		}
	case dropEvent:
		if e := j.byID[l.h.ID]; e != nil {
			j.remove(e)
		}
	}
}

func (j *Journal) setTo(e *Entry, to string) {
	if (e.To == "") != (to == "") {
		if to == "" {
			j.pending++
		} else {
			j.pending--
		}
	}
	e.To = to
}

// remove takes e out of the view (its lines become dead).
func (j *Journal) remove(e *Entry) {
	for i, x := range j.entries {
		if x == e {
			j.entries = append(j.entries[:i:i], j.entries[i+1:]...)
			break
		}
	}
	delete(j.byID, e.ID)
	j.live -= e.n + 1 + e.toN
	j.prompts -= e.n + 1
	if e.To == "" {
		j.pending--
	}
}

// trim drops the oldest prompts past the bounds, recording each drop.
// Caller holds the lock.
func (j *Journal) trim() {
	drop := 0
	bytes := j.prompts
	over := func() bool {
		return j.Limit > 0 && len(j.entries)-drop > j.Limit || j.MaxBytes > 0 && bytes > j.MaxBytes
	}
	for drop < len(j.entries)-1 && over() {
		bytes -= j.entries[drop].n + 1
		drop++
	}
	for _, e := range j.entries[:drop] {
		delete(j.byID, e.ID)
		j.live -= e.n + 1 + e.toN
		j.prompts -= e.n + 1
		if e.To == "" {
			j.pending--
		}
		j.out = dropLine(j.out, e.ID)
		if j.OnDrop != nil {
			j.OnDrop(e)
		}
	}
	j.entries = j.entries[drop:]
}

// flush appends the queued event lines.
func (j *Journal) flush() error {
	if len(j.out) == 0 {
		return nil
	}
	defer func() { j.out = j.out[:0] }()
	return j.write(j.out)
}

// terminate ends a torn line left by a crashed writer, so it stays one
// dead line and the next line starts clean. Caller holds the lock.
func (j *Journal) terminate() error {
	if !j.torn {
		return nil
	}
	fi, err := j.h.f.Stat()
	if err != nil {
		return err
	}
	if _, err := j.h.f.Write([]byte{'\n'}); err != nil {
		return j.writeFailed(err)
	}
	j.end, j.torn = fi.Size()+1, false
	return nil
}

// write appends pieces that together are whole lines at end. Caller holds
// the lock and accounts what of them is live.
func (j *Journal) write(pieces ...[]byte) error {
	if err := j.terminate(); err != nil {
		return err
	}
	for _, p := range pieces {
		n, err := j.h.f.Write(p)
		j.end += int64(n)
		if err != nil {
			return j.writeFailed(err)
		}
	}
	return nil
}

// writeFailed leaves whatever part of a line reached the file to the next
// sync, which finds it unterminated and terminates it before appending.
func (j *Journal) writeFailed(err error) error {
	if fi, serr := j.h.f.Stat(); serr == nil && fi.Size() > j.end {
		j.ingest(fi.Size())
	}
	return fmt.Errorf("write the prompt record: %w", err)
}

// Prompt is a prompt to append.
type Prompt struct {
	Meta map[string]string
	Root string
	// Body is the text as JSON string contents.
	Body *jsonstr.Buffer
	// To is who takes it at once ("" = pending).
	To string
}

// Append records a delivered prompt: one line (two when it was taken at
// once), written in O(prompt). Caller holds the lock (Begin).
func (j *Journal) Append(p Prompt) (*Entry, error) {
	if !j.locked {
		return nil, errors.New("journal: Append outside Begin/End")
	}
	if err := j.flush(); err != nil { // keep event lines in order
		return nil, err
	}
	now := time.Now
	if j.Now != nil {
		now = j.Now
	}
	e := &Entry{ID: hub.RandomHex(8), Seq: j.maxSeq + 1, Root: p.Root, To: p.To}
	tail := promptTail(make([]byte, 0, 256), e.ID, e.Seq, now().UTC(), p.Meta, p.Root)
	e.n = int64(len(textOpen)+p.Body.Len()+len(tail)) - 1
	if p.To != "" {
		mark := len(tail)
		tail = toLine(tail, e.ID, p.To)
		e.toN = int64(len(tail) - mark)
	}
	if err := j.terminate(); err != nil {
		return nil, err
	}
	e.off = j.end
	if err := j.write([]byte(textOpen)); err != nil {
		return nil, err
	}
	n, err := p.Body.WriteTo(j.h.f)
	j.end += n
	if err != nil {
		return nil, j.writeFailed(err)
	}
	if err := j.write(tail); err != nil {
		return nil, err
	}
	j.entries = append(j.entries, e)
	j.byID[e.ID] = e
	j.live += e.n + 1 + e.toN
	j.prompts += e.n + 1
	j.maxSeq = e.Seq
	if e.To == "" {
		j.pending++
	}
	return e, nil
}

// SetTo records who took e ("" = pending again). Caller holds the lock;
// the line is written at End.
func (j *Journal) SetTo(e *Entry, to string) {
	if j.byID[e.ID] != e || e.To == to {
		return
	}
	mark := len(j.out)
	j.out = toLine(j.out, e.ID, to)
	n := int64(len(j.out) - mark)
	j.live += n - e.toN
	e.toN = n
	j.setTo(e, to)
}

// Entries are the live prompts, oldest first (valid until the next
// Begin).
func (j *Journal) Entries() []*Entry { return j.entries }

// Lookup is the live prompt with id, or nil.
func (j *Journal) Lookup(id string) *Entry { return j.byID[id] }

// Len is the number of live prompts.
func (j *Journal) Len() int { return len(j.entries) }

// SkipSeq reserves a seq no prompt of this journal will get (for a prompt
// that could not be recorded but is still handed on).
func (j *Journal) SkipSeq() int64 {
	j.maxSeq++
	return j.maxSeq
}

// Pending is the number of live prompts nobody took.
func (j *Journal) Pending() int { return j.pending }

// Path is the record's file.
func (j *Journal) Path() string { return j.path }

// View opens e's line for reading after the lock is released; Close the
// view when done. Call with the caller's serialisation held. It is nil
// once the journal is closed.
func (j *Journal) View(e *Entry) *View {
	if j.h == nil {
		return nil
	}
	j.h.refs.Add(1)
	return &View{id: e.ID, legacy: e.legacy, line: io.NewSectionReader(j.h.f, e.off, e.n), h: j.h}
}
