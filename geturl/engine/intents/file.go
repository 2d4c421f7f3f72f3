package intents

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/jsonw"
)

// A durable journal keeps its records in an append-only file of JSON
// lines, one file per session generation, so a mutation URL keeps
// answering across a restart of the process and an intent that ran
// before it never runs again after it.
//
// The write-ahead rule: an intent's "run" line is written and synced
// before its executor is called, so no side effect ever starts without a
// durable trace; its "done" line (state, result or structured error) is
// appended when it finishes, synced by the next run line, by Close, or by
// a compaction. A record the file leaves running (the process died while
// it executed, or before its done line reached the disk) is loaded as
// failed with CodeInterrupted: its outcome is unknown, so it is never run
// again by itself. A pending intent that never started has no line at all
// and is simply forgotten.
//
// The file is bounded: when it outgrows twice its last compacted size
// (and at least compactMin) it is rewritten from the journal's bounded
// state (tombstones, then the records oldest first).

// FileID is what a journal file belongs to: a session and one of its
// generations. Its header names both, and a file naming others is
// refused.
type FileID struct {
	Session    string
	Generation string
}

// Limits of the journal file, so a file (corrupt, or planted by whoever
// could) cannot exhaust the loader.
const (
	// MaxFileBytes bounds the file read at load. A compacted file holds at
	// most DefaultMaxBytes of results and DefaultMaxTombstones tombstones
	// (about 10 MiB); appends between compactions at most double it.
	MaxFileBytes = 64 << 20
	// MaxLineBytes bounds one line. A result too large for it is kept in
	// the file as "ran, result not kept", like an evicted record.
	MaxLineBytes = 8 << 20
	// compactMin is the smallest file a compaction rewrites.
	compactMin = 1 << 20

	maxCallLen   = 512
	maxToolLen   = 32
	maxOriginLen = 64 << 10
	maxTextLen   = 1 << 20
	maxFields    = 64
)

// fileVersion is the header's version.
const fileVersion = 1

// ErrCorrupt is wrapped by every refusal of a journal file's content.
var ErrCorrupt = errors.New("corrupt intent journal")

// journalFile is the open file of a durable journal.
type journalFile struct {
	path string
	id   FileID

	mu       sync.Mutex // taken before Journal.mu, never after
	f        *os.File   // nil once closed or removed
	size     int64
	snapSize int64 // the file's size after the last compaction
	dirty    bool  // appended since the last sync
}

// line is one line of the file. K is "hdr", "run", "done" or "tomb".
type line struct {
	K string `json:"k"`

	// hdr
	V          int    `json:"v,omitempty"`
	Session    string `json:"session,omitempty"`
	Generation string `json:"gen,omitempty"`

	// run, done
	Call     string     `json:"call,omitempty"`
	Tool     string     `json:"tool,omitempty"`
	Digest   string     `json:"digest,omitempty"` // hex; a tomb's is 32 digits
	Explicit bool       `json:"explicit,omitempty"`
	Origin   string     `json:"origin,omitempty"`
	Created  *time.Time `json:"created,omitempty"`

	State    State           `json:"state,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Err      *errLine        `json:"err,omitempty"`
	Lost     bool            `json:"lost,omitempty"` // ran; the result was too large to keep
	Tag      uint64          `json:"tag,omitempty"`
	Replays  int             `json:"replays,omitempty"`
	Started  *time.Time      `json:"started,omitempty"`
	Finished *time.Time      `json:"finished,omitempty"`

	// tomb
	Key    string `json:"key,omitempty"` // hex of the tombKey
	Failed bool   `json:"failed,omitempty"`
}

// errLine is a fault.Error as the file keeps it: its tool-specific fields
// as the JSON they are answered with, so a later answer is the same bytes.
type errLine struct {
	Code      string      `json:"code"`
	Detail    string      `json:"detail,omitempty"`
	Hint      string      `json:"hint,omitempty"`
	Retryable bool        `json:"retryable,omitempty"`
	Action    string      `json:"action,omitempty"`
	Fields    []fieldLine `json:"fields,omitempty"`
}

type fieldLine struct {
	Key string          `json:"key"`
	Val json.RawMessage `json:"val"`
}

func errLineOf(e *fault.Error) (*errLine, error) {
	if e == nil {
		return nil, nil
	}
	l := &errLine{Code: e.Code, Detail: e.Detail, Hint: e.Hint, Retryable: e.Retryable, Action: e.Action}
	for _, f := range e.Fields() {
		var v []byte
		var err error
		if a, ok := f.Val.(interface {
			AppendJSON([]byte) ([]byte, error)
		}); ok {
			v, err = a.AppendJSON(nil)
		} else {
			v, err = jsonw.Reflect(nil, f.Val)
		}
		if err != nil {
			return nil, err
		}
		l.Fields = append(l.Fields, fieldLine{Key: f.Key, Val: v})
	}
	return l, nil
}

func (l *errLine) fault() *fault.Error {
	e := &fault.Error{Code: l.Code, Detail: l.Detail, Hint: l.Hint, Retryable: l.Retryable, Action: l.Action}
	for _, f := range l.Fields {
		e.With(f.Key, f.Val)
	}
	return e
}

// encodeLine is l as one line of the file, HTML escaping off (a raw
// result stays the bytes it was).
func encodeLine(l *line) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func runLine(e *entry) *line {
	created := e.rec.Created
	return &line{K: "run", Call: e.rec.Call, Tool: e.rec.Tool, Digest: hex.EncodeToString(e.digest[:]),
		Explicit: e.rec.Explicit, Origin: e.rec.Origin, Created: &created}
}

// doneLine is the finished record rec as a line; a result too large for
// one line is marked lost.
func doneLine(rec *Record) (*line, error) {
	started, finished := rec.Started, rec.Finished
	l := &line{K: "done", Call: rec.Call, State: rec.State, Result: rec.Result, Tag: rec.Tag, Replays: rec.Replays,
		Started: &started, Finished: &finished}
	el, err := errLineOf(rec.Err)
	if err != nil {
		return nil, err
	}
	l.Err = el
	if len(rec.Result)+len(rec.Origin) > MaxLineBytes-(64<<10) {
		l.Result, l.Lost = nil, true
	}
	return l, nil
}

func tombLine(k tombKey, t tomb) *line {
	return &line{K: "tomb", Key: hex.EncodeToString(k[:]), Digest: hex.EncodeToString(t.digest[:]), Tool: t.tool,
		Tag: t.tag, Replays: int(t.replays), Failed: t.failed}
}

// Create makes a durable journal with a new, empty file at path (an
// existing file is replaced). The file is private (0600, checked like
// every state file) in a private directory.
func Create(path string, id FileID, o Options) (*Journal, error) {
	j := New(o)
	if err := j.attach(path, id); err != nil {
		return nil, err
	}
	return j, nil
}

// Load restores the durable journal at path, which must name id: every
// finished record with its result, tombstones, and every record the file
// left running failed with CodeInterrupted. The file is then rewritten
// (compacted) and kept appending. A missing file is fs.ErrNotExist; an
// unsafe one (a symbolic link, another owner, others may read or write
// it) is hub.ErrUnsafeFile; one whose content is refused wraps
// ErrCorrupt. On any error nothing is returned: the caller must not trust
// the file's generation.
func Load(path string, id FileID, o Options) (*Journal, error) {
	b, err := hub.ReadPrivateFile(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	j := New(o)
	if err := j.restore(b, id); err != nil {
		return nil, err
	}
	if err := j.attach(path, id); err != nil {
		return nil, err
	}
	return j, nil
}

// attach writes the journal's state to a new file at path and keeps it
// open for appending.
func (j *Journal) attach(path string, id FileID) error {
	if err := hub.EnsurePrivateDir(filepath.Dir(path)); err != nil {
		return err
	}
	jf := &journalFile{path: path, id: id}
	jf.mu.Lock()
	defer jf.mu.Unlock()
	j.mu.Lock()
	j.file = jf
	j.mu.Unlock()
	if err := j.compactLocked(jf); err != nil {
		j.mu.Lock()
		j.file = nil
		j.mu.Unlock()
		return err
	}
	return nil
}

// compactLocked rewrites the file from the journal's state and reopens it
// for appending. jf.mu is held.
func (j *Journal) compactLocked(jf *journalFile) error {
	b, err := j.snapshot(jf.id)
	if err != nil {
		return err
	}
	if jf.f != nil {
		jf.f.Close()
		jf.f = nil
	}
	if err := hub.WriteFileAtomic(jf.path, b, 0o600); err != nil {
		if jf.snapSize == 0 {
			return err // a new file: nothing to go back to
		}
		// The old file is still whole and still says everything: keep
		// appending to it, and try to compact again at the next bound.
		f, rerr := hub.OpenPrivate(jf.path, os.O_WRONLY|os.O_APPEND, 0, true)
		if rerr != nil {
			return err
		}
		jf.f, jf.snapSize = f, jf.size
		return nil
	}
	f, err := hub.OpenPrivate(jf.path, os.O_WRONLY|os.O_APPEND, 0, true)
	if err != nil {
		return err
	}
	jf.f, jf.size, jf.snapSize, jf.dirty = f, int64(len(b)), int64(len(b)), false
	return nil
}

// snapshot is the journal's state as a file: the header, the tombstones
// oldest first, then each durably started record (its run line, and its
// done line when finished), oldest first.
func (j *Journal) snapshot(id FileID) ([]byte, error) {
	var out []byte
	add := func(l *line) error {
		b, err := encodeLine(l)
		if err == nil {
			out = append(out, b...)
		}
		return err
	}
	if err := add(&line{K: "hdr", V: fileVersion, Session: id.Session, Generation: id.Generation}); err != nil {
		return nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, k := range j.tombSeq {
		if err := add(tombLine(k, j.tombs[k])); err != nil {
			return nil, err
		}
	}
	for _, key := range j.order {
		e := j.records[key]
		if !e.logged {
			continue // not started: its run line comes when it starts
		}
		if err := add(runLine(e)); err != nil {
			return nil, err
		}
		if e.rec.State.Finished() {
			l, err := doneLine(&e.rec)
			if err != nil {
				return nil, err
			}
			if err := add(l); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// appendLocked appends b, syncing when sync is set (and then what earlier
// unsynced appends wrote), and compacts a file that outgrew its bound.
// jf.mu is held.
func (j *Journal) appendLocked(jf *journalFile, b []byte, sync bool) error {
	if jf.f == nil {
		return errors.New("the journal file is closed")
	}
	if _, err := jf.f.Write(b); err != nil {
		return err
	}
	jf.size += int64(len(b))
	jf.dirty = true
	if jf.size > max(compactMin, 2*jf.snapSize) {
		if err := j.compactLocked(jf); err != nil {
			return err
		}
	}
	if sync && jf.dirty {
		if err := jf.f.Sync(); err != nil {
			return err
		}
		jf.dirty = false
	}
	return nil
}

// logStart makes e's run line durable before its executor is called.
func (j *Journal) logStart(e *entry) error {
	j.mu.Lock()
	jf := j.file
	j.mu.Unlock()
	if jf == nil {
		return nil
	}
	b, err := encodeLine(runLine(e))
	if err != nil {
		return err
	}
	jf.mu.Lock()
	defer jf.mu.Unlock()
	if jf.removed() {
		return errRemoved
	}
	if err := j.appendLocked(jf, b, true); err != nil {
		return err
	}
	j.mu.Lock()
	e.logged = true
	j.mu.Unlock()
	return nil
}

// logDone appends rec's done line (synced later: until then a crash
// leaves the record running, which loads as interrupted, never as
// something to run again). A failure is the file's; the record stays
// correct in memory.
func (j *Journal) logDone(rec Record) {
	j.mu.Lock()
	jf := j.file
	j.mu.Unlock()
	if jf == nil {
		return
	}
	l, err := doneLine(&rec)
	if err != nil {
		return
	}
	b, err := encodeLine(l)
	if err != nil {
		return
	}
	jf.mu.Lock()
	defer jf.mu.Unlock()
	if jf.f != nil && !jf.removed() {
		j.appendLocked(jf, b, false)
	}
}

// removed reports whether the file was removed (Remove), as opposed to
// failing. jf.mu is held.
func (jf *journalFile) removed() bool { return jf.path == "" }

// errRemoved refuses to start an intent of a journal whose generation has
// ended (Remove).
var errRemoved = errors.New("the session generation has ended")

// Durable reports whether the journal keeps an open file: whether what
// it records survives the process.
func (j *Journal) Durable() bool {
	j.mu.Lock()
	jf := j.file
	j.mu.Unlock()
	if jf == nil {
		return false
	}
	jf.mu.Lock()
	defer jf.mu.Unlock()
	return jf.f != nil
}

// Close syncs and closes the journal's file; the journal keeps working in
// memory. Closing a journal without a file does nothing.
func (j *Journal) Close() error {
	j.mu.Lock()
	jf := j.file
	j.mu.Unlock()
	if jf == nil {
		return nil
	}
	jf.mu.Lock()
	defer jf.mu.Unlock()
	if jf.f == nil {
		return nil
	}
	err := jf.f.Sync()
	if cerr := jf.f.Close(); err == nil {
		err = cerr
	}
	jf.f = nil
	return err
}

// Remove closes the journal's file and deletes it: the generation's
// authority has ended (rotation, stop, removal), so its journal goes with
// it. The journal keeps answering in memory until it is dropped.
func (j *Journal) Remove() error {
	j.mu.Lock()
	jf := j.file
	j.mu.Unlock()
	if jf == nil {
		return nil
	}
	jf.mu.Lock()
	defer jf.mu.Unlock()
	if jf.removed() {
		return nil
	}
	if jf.f != nil {
		jf.f.Close()
		jf.f = nil
	}
	path := jf.path
	jf.path = ""
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// restore applies the file's lines b to the empty journal j. It is the
// parser of untrusted bytes: every line and value is bounded, and
// anything it does not recognise refuses the whole file.
func (j *Journal) restore(b []byte, id FileID) error {
	if len(b) > MaxFileBytes {
		return fmt.Errorf("%w: larger than %d bytes", ErrCorrupt, MaxFileBytes)
	}
	n := 0
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			// A torn last line: the process died while appending it. A
			// run line that never reached its newline was never synced,
			// so its executor never started; a torn done line leaves its
			// record running (interrupted).
			break
		}
		raw := b[:i]
		b = b[i+1:]
		n++
		if len(raw) > MaxLineBytes {
			return fmt.Errorf("%w: line %d is longer than %d bytes", ErrCorrupt, n, MaxLineBytes)
		}
		var l line
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil || dec.More() {
			return fmt.Errorf("%w: line %d is not a journal record", ErrCorrupt, n)
		}
		if n == 1 {
			if l.K != "hdr" || l.V != fileVersion {
				return fmt.Errorf("%w: no header of version %d", ErrCorrupt, fileVersion)
			}
			if l.Session != id.Session || l.Generation != id.Generation {
				return fmt.Errorf("%w: the file belongs to another session generation", ErrCorrupt)
			}
			continue
		}
		if err := j.apply(&l); err != nil {
			return fmt.Errorf("%w: line %d: %v", ErrCorrupt, n, err)
		}
	}
	if n == 0 {
		return fmt.Errorf("%w: empty", ErrCorrupt)
	}
	now := j.now()
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, key := range j.order {
		e := j.records[key]
		if e.rec.State.Finished() {
			continue
		}
		e.rec.State, e.rec.Err, e.rec.Finished = Failed, interrupted(), now
		e.size = e.rec.size()
		j.bytes += e.size
		close(e.done)
	}
	for (j.bytes > j.maxBytes || len(j.records) > j.maxRecs) && j.evictOldestFinished("") {
	}
	return nil
}

// interrupted is the error of an intent a restart found running.
func interrupted() *fault.Error {
	return &fault.Error{Code: CodeInterrupted,
		Detail: "the hub stopped while this intent was running: whether its change was made is unknown; it will not run again by itself",
		Hint: "check the outcome first: read the files it names (/r), or look for what the command does; " +
			"to run it again on purpose, fetch retry (the same request with a new run=)",
		Retryable: true, Action: fault.ActionRereadThenRetry}
}

// apply is one line after the header. j.mu is not held (the journal is
// not shared yet).
func (j *Journal) apply(l *line) error {
	switch l.K {
	case "run":
		if err := checkRun(l); err != nil {
			return err
		}
		d, _ := hex.DecodeString(l.Digest)
		if _, known := j.records[l.Call]; known {
			return nil // a record already restored keeps its state
		}
		if _, known := j.tombs[tombKeyOf(l.Call)]; known {
			return nil
		}
		if len(j.records) >= j.maxRecs && !j.evictOldestFinished("") {
			return errors.New("more intents running than the journal holds")
		}
		e := &entry{rec: Record{Call: l.Call, Tool: l.Tool, Explicit: l.Explicit, State: Running, Origin: l.Origin, Created: *l.Created},
			digest: Digest(d), done: make(chan struct{}), logged: true}
		e.rec.Started = e.rec.Created
		j.records[l.Call] = e
		j.order = append(j.order, l.Call)
	case "done":
		if err := checkDone(l); err != nil {
			return err
		}
		e := j.records[l.Call]
		if e == nil || e.rec.State.Finished() {
			return nil // evicted since, or written twice around a compaction
		}
		e.rec.State, e.rec.Tag, e.rec.Replays = l.State, l.Tag, l.Replays
		if l.Started != nil {
			e.rec.Started = *l.Started
		}
		if l.Finished != nil {
			e.rec.Finished = *l.Finished
		}
		if l.State == Failed {
			e.rec.Err = l.Err.fault()
		} else {
			e.rec.Result = l.Result
		}
		close(e.done)
		if l.Lost {
			// Ran, result not kept: exactly what a tombstone says.
			j.remove(l.Call)
			j.bury(l.Call, e)
			return nil
		}
		e.size = e.rec.size()
		j.bytes += e.size
		for j.bytes > j.maxBytes && j.evictOldestFinished(l.Call) {
		}
	case "tomb":
		if err := checkTomb(l); err != nil {
			return err
		}
		k, _ := hex.DecodeString(l.Key)
		d, _ := hex.DecodeString(l.Digest)
		tk := tombKey(k)
		if _, known := j.tombs[tk]; known {
			return nil
		}
		j.tombs[tk] = tomb{digest: [16]byte(d), tool: internTool(l.Tool), tag: l.Tag, replays: int32(l.Replays), failed: l.Failed}
		j.tombSeq = append(j.tombSeq, tk)
		if len(j.tombSeq) > j.maxTombs {
			delete(j.tombs, j.tombSeq[0])
			j.tombSeq = j.tombSeq[1:]
		}
	default:
		return fmt.Errorf("unknown kind %q", l.K)
	}
	return nil
}

// remove drops a record from the maps without a tombstone. j.mu is held
// or the journal is not shared yet.
func (j *Journal) remove(key string) {
	for i, k := range j.order {
		if k == key {
			j.order = append(j.order[:i], j.order[i+1:]...)
			break
		}
	}
	if e := j.records[key]; e != nil && e.rec.State.Finished() {
		j.bytes -= e.size
	}
	delete(j.records, key)
}

func checkRun(l *line) error {
	switch {
	case !validCall(l.Call):
		return errors.New("bad call id")
	case !validTool(l.Tool):
		return errors.New("bad tool")
	case len(l.Digest) != 64 || !isHex(l.Digest):
		return errors.New("bad digest")
	case len(l.Origin) > maxOriginLen:
		return errors.New("origin too long")
	case l.Created == nil:
		return errors.New("no creation time")
	case l.State != "" || l.Result != nil || l.Err != nil || l.Key != "":
		return errors.New("fields of another kind")
	}
	d, _ := hex.DecodeString(l.Digest)
	if !l.Explicit && l.Call != AutoID(l.Tool, Digest(d)) {
		return errors.New("automatic call id does not match its digest")
	}
	return nil
}

func checkDone(l *line) error {
	switch {
	case !validCall(l.Call):
		return errors.New("bad call id")
	case l.Replays < 0 || l.Replays > 1<<31-1:
		return errors.New("bad replay count")
	case l.Tool != "" || l.Digest != "" || l.Key != "":
		return errors.New("fields of another kind")
	}
	switch l.State {
	case Succeeded:
		if l.Err != nil || (l.Result == nil) != l.Lost {
			return errors.New("a success has a result (or lost it) and no error")
		}
		if l.Result != nil {
			// Results are kept as written (compact), so an answer after a
			// restart is the same bytes as before it.
			var c bytes.Buffer
			if json.Compact(&c, l.Result) != nil || !bytes.Equal(c.Bytes(), l.Result) {
				return errors.New("a result that is not compact JSON")
			}
		}
	case Failed:
		if l.Err == nil || l.Result != nil || l.Lost {
			return errors.New("a failure has an error and no result")
		}
		return checkErr(l.Err)
	default:
		return errors.New("bad state")
	}
	return nil
}

func checkErr(e *errLine) error {
	if e.Code == "" || len(e.Code) > 128 || len(e.Detail) > maxTextLen || len(e.Hint) > maxTextLen || len(e.Action) > 128 {
		return errors.New("bad error")
	}
	if len(e.Fields) > maxFields {
		return errors.New("too many error fields")
	}
	for _, f := range e.Fields {
		if f.Key == "" || len(f.Key) > 128 || fault.Standard(f.Key) || len(f.Val) == 0 {
			return errors.New("bad error field")
		}
	}
	return nil
}

func checkTomb(l *line) error {
	switch {
	case len(l.Key) != 32 || !isHex(l.Key):
		return errors.New("bad key")
	case len(l.Digest) != 32 || !isHex(l.Digest):
		return errors.New("bad digest")
	case !validTool(l.Tool):
		return errors.New("bad tool")
	case l.Replays < 0 || l.Replays > 1<<31-1:
		return errors.New("bad replay count")
	case l.Call != "" || l.State != "" || l.Result != nil || l.Err != nil:
		return errors.New("fields of another kind")
	}
	return nil
}

func validCall(s string) bool { return s != "" && len(s) <= maxCallLen && NonceRE.MatchString(s) }

func validTool(s string) bool {
	if s == "" || len(s) > maxToolLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c == '_') {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// internTool shares the tool names a journal knows instead of keeping a
// copy per tombstone.
func internTool(s string) string {
	for _, t := range []string{"write", "edit", "apply_patch", "terminal", "plugin"} {
		if s == t {
			return t
		}
	}
	return s
}
