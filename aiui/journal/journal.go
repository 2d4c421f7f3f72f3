package journal

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// compactRatio: a compaction runs once the dead bytes exceed this many
// times the live ones (a dead share over 75%). Each compaction copies the
// live bytes once, so appends pay 1/compactRatio of a copy per byte on top
// of their write: at 1 the compactions cost as much CPU as the appends
// (measured), at 3 a third, for a file of at most 4× the live bytes.
const compactRatio = 3

// rotateAfter: a head of at least this many bytes, more than half dead,
// is rotated (renamed to the previous file) instead of compacted. A
// record that big is one whose oldest prompts fall out as new ones come
// in: their bytes die in the previous file, which is deleted once none of
// its prompts is live, so nothing is ever copied. Smaller records compact
// (copying a few live bytes costs less than a second file).
const rotateAfter = 1 << 20

// Entry is one live prompt as memory keeps it: what routing needs and
// where its line is. The text stays in the file.
type Entry struct {
	ID   string
	Seq  int64
	Root string
	// To is who took the prompt: "" while pending, "shell", "mcp:<face>".
	To string

	h      *handle // the file its prompt line is in (the head or prev)
	off, n int64   // its prompt line (n without the '\n')
	toN    int64   // length of its latest "to" line, 0 if none
	legacy bool    // its line is re-encoded by the next compaction
}

// handle is an open record file, reference counted so a reader streaming
// a prompt outside the journal's lock keeps the file it started on even
// when a compaction replaces it meanwhile.
type handle struct {
	f    *os.File
	refs atomic.Int32
	// removed: the journal unlinked the file (a rotated or compacted-away
	// one), so its last close frees its page cache (see closeRemoved).
	removed atomic.Bool
}

func newHandle(f *os.File) *handle {
	h := &handle{f: f}
	h.refs.Store(1)
	return h
}

// openHandle opens path (0600 when flag creates it) with its identity.
func openHandle(path string, flag int) (*handle, os.FileInfo, error) {
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return newHandle(f), fi, nil
}

func (h *handle) release() {
	if h.refs.Add(-1) == 0 {
		if h.removed.Load() {
			closeRemoved(h.f)
		} else {
			h.f.Close()
		}
	}
}

// closeRemoved closes a file the journal unlinked. That close frees the
// file's pages, all at once: tens of MiB for a rotated record, 13–16 ms
// of the kernel's time, which the caller (the socket whose prompt
// rotated the record, under the outbox's lock) should not wait for.
var closeRemoved = func(f *os.File) { go f.Close() }

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

	// prev is the head before the last rotation (path+".prev") while any
	// of its prompts is live; nil when there is none.
	prev     *handle
	prevFi   os.FileInfo
	prevSize int64

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
	out     []byte   // event lines to append at End
	iov     [][]byte // appendLine's pieces, kept for the next
	retryAt int64    // next size at which a failed compaction or rotation is retried

	compactions int // run by this journal (tests: a FIFO record never needs one)
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
	j.dropPrev()
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
	if j.prev != nil && (len(j.entries) == 0 || j.entries[0].h != j.prev) {
		// the oldest live prompt is in the head: prev holds nothing live
		// (its event lines are about its own prompts, which are gone)
		if rerr := os.Remove(j.prevPath()); rerr == nil || errors.Is(rerr, fs.ErrNotExist) {
			j.prev.removed.Store(true)
			j.dropPrev()
		} else {
			err = errors.Join(err, rerr)
		}
	}
	// prev's bytes are left out: they go without a copy once its
	// prompts fall out (this undercounts the head's dead bytes by what of
	// the live ones prev holds)
	dead := j.end - j.live
	switch {
	case j.end < j.retryAt:
		// a compaction or rotation failed: retry once the file has grown
	case j.prev == nil && !j.rewrite && j.end >= rotateAfter && j.end-j.live > j.live:
		err = errors.Join(err, j.retryLater(j.rotate()))
	case dead > compactRatio*j.live || j.rewrite:
		err = errors.Join(err, j.retryLater(j.compactNow()))
	}
	return err
}

// retryLater puts off the next compaction or rotation after one failed
// until the file has grown.
func (j *Journal) retryLater(err error) error {
	if err != nil {
		j.retryAt = j.end + max(j.live, 64<<10)
	}
	return err
}

// prevPath is where a rotation moves the head.
func (j *Journal) prevPath() string { return j.path + ".prev" }

// dropPrev forgets the previous file (readers streaming from it keep it).
func (j *Journal) dropPrev() {
	if j.prev != nil {
		j.prev.release()
	}
	j.prev, j.prevFi, j.prevSize = nil, nil, 0
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
	return e.view()
}

func (e *Entry) view() *View {
	e.h.refs.Add(1)
	return &View{id: e.ID, legacy: e.legacy, line: io.NewSectionReader(e.h.f, e.off, e.n), h: e.h}
}
