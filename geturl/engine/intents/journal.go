package intents

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/hub/jsonw"
)

// Default bounds of one journal. The spec names none: these keep a
// session's history of results within a few MiB while holding far more
// intents than an agent has in flight.
const (
	DefaultMaxRecords = 256
	DefaultMaxBytes   = 4 << 20
	// DefaultMaxTombstones bounds what is remembered of evicted intents:
	// a replay of one older than this many later intents would run again.
	// A tombstone costs about 170 bytes with the map's slack
	// (TestTombstonesOutlastALongSession logs it), so a session that made
	// 32,768 mutations holds about 5.5 MiB of them.
	DefaultMaxTombstones = 1 << 15
)

// Options configure a Journal; zero values take the defaults.
type Options struct {
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// After is the timer Wait uses (time.After when nil), injectable so
	// tests never wait on the wall clock.
	After func(time.Duration) <-chan time.Time
	// MaxRecords bounds the records kept; past it the oldest finished one
	// is evicted, and when none is finished Begin refuses journal_full.
	MaxRecords int
	// MaxBytes bounds the results and errors kept; past it the oldest
	// finished records are evicted.
	MaxBytes int
	// MaxTombstones bounds what is remembered of evicted records.
	MaxTombstones int
}

// Exec executes an intent, once. It calls run.Running when the side
// effect starts (after any queueing), may set run.SetTag, and returns the
// JSON-encodable result or a structured error. ctx is the execution's own
// context, never the request's: a dropped connection does not cancel a
// mutation.
type Exec func(ctx context.Context, run *Run) (any, *fault.Error)

// Intent is one mutation as the agent asked for it.
type Intent struct {
	// Tool is the journal tool name.
	Tool string
	// Args are the canonical semantic arguments (see Canonical for the
	// value types): decoded content, resolved virtual paths, never wait=
	// and never the transport the content came by.
	Args any
	// Run is the run= nonce ("" for none).
	Run string
	// Call is the explicit call= id ("" for the automatic one). Call and
	// Run together are refused.
	Call string
	// Origin is the request as the agent wrote it, from the route on
	// ("/w?path=a&raw=…"), kept so recovery URLs offered later (a retry
	// from a /j poll, a repeat) repeat it exactly with a new run=.
	Origin string
	// Exec runs the intent.
	Exec Exec
}

// Journal is one session generation's intents. It is safe for concurrent
// use.
type Journal struct {
	now      func() time.Time
	after    func(time.Duration) <-chan time.Time
	maxRecs  int
	maxBytes int
	maxTombs int

	mu      sync.Mutex
	records map[string]*entry
	order   []string // creation order, oldest first
	bytes   int
	tombs   map[tombKey]tomb
	tombSeq []tombKey // tombstone order, oldest first
	// file is the durable journal's file (Create, Load), nil for one kept
	// in memory only.
	file *journalFile
}

type entry struct {
	rec    Record
	digest Digest
	size   int
	done   chan struct{} // closed when finished
	logged bool          // its run line is in the file (a durable journal)
}

// A tombstone keeps what a replay needs of an evicted record, compactly:
// its call id and digest as 128-bit prefixes of their hashes (a collision
// is as likely as guessing a 128-bit key).
type tomb struct {
	digest  [16]byte // Digest[:16]
	tool    string   // one of the few tool names: shared, not copied
	tag     uint64
	replays int32
	failed  bool // only finished records are evicted: else Succeeded
}

type tombKey [16]byte

func tombKeyOf(call string) tombKey {
	h := sha256.Sum256([]byte(call))
	return tombKey(h[:16])
}

// New returns an empty journal.
func New(o Options) *Journal {
	j := &Journal{now: o.Now, after: o.After, maxRecs: o.MaxRecords, maxBytes: o.MaxBytes, maxTombs: o.MaxTombstones,
		records: map[string]*entry{}, tombs: map[tombKey]tomb{}}
	if j.now == nil {
		j.now = time.Now
	}
	if j.after == nil {
		j.after = time.After
	}
	if j.maxRecs <= 0 {
		j.maxRecs = DefaultMaxRecords
	}
	if j.maxBytes <= 0 {
		j.maxBytes = DefaultMaxBytes
	}
	if j.maxTombs <= 0 {
		j.maxTombs = DefaultMaxTombstones
	}
	return j
}

// Begin records in, or finds the intent it replays. For a new intent it
// returns the pending record and start, the one function that executes
// it: the caller runs start exactly once (usually on a goroutine with a
// context of its own). For a replay start is nil and the record is the
// existing one, its Replays counted. A call= id already used with other
// arguments is refused with call_conflict; nothing is recorded then.
func (j *Journal) Begin(in Intent) (rec Record, start func(context.Context), terr *fault.Error) {
	if in.Call != "" && in.Run != "" {
		return Record{}, nil, &fault.Error{Code: fault.CodeConflictingParams, Detail: "call and run together",
			Hint: "give call= or run=, not both", Retryable: true, Action: fault.ActionCorrectRequest}
	}
	key, d, terr := identify(in)
	if terr != nil {
		return Record{}, nil, terr
	}

	j.mu.Lock()
	defer j.mu.Unlock()
	if rec, held, terr := j.replayLocked(key, d); held || terr != nil {
		return rec, nil, terr
	}
	if len(j.records) >= j.maxRecs && !j.evictOldestFinished("") {
		return Record{}, nil, &fault.Error{Code: CodeJournalFull,
			Detail:    fmt.Sprintf("%d intents are pending or running", len(j.records)),
			Hint:      "poll the running intents with /j and retry this URL when one has finished",
			Retryable: true, Action: fault.ActionRetryLater}
	}
	e := &entry{
		rec:    Record{Call: key, Tool: in.Tool, Explicit: in.Call != "", State: Pending, Origin: in.Origin, Created: j.now()},
		digest: d,
		done:   make(chan struct{}),
	}
	j.records[key] = e
	j.order = append(j.order, key)
	exec := in.Exec
	var once sync.Once
	return e.rec, func(ctx context.Context) { once.Do(func() { j.execute(ctx, e, exec) }) }, nil
}

// identify is the call id and digest of in (an auto: id unless call=
// names it).
func identify(in Intent) (string, Digest, *fault.Error) {
	run := in.Run
	if in.Call != "" {
		run = ""
	}
	d, err := Identity(in.Tool, in.Args, run)
	if err != nil {
		return "", d, &fault.Error{Code: fault.CodeInvalidParameter, Detail: "arguments: " + err.Error(),
			Retryable: true, Action: fault.ActionCorrectRequest}
	}
	key := AutoID(in.Tool, d)
	switch {
	case in.Call == "":
	case strings.HasPrefix(in.Call, autoPrefix) && in.Call != key:
		// The auto: ids belong to the arguments that produce them: taken by
		// call= for other arguments, the plain request for those would
		// meet a call_conflict it never asked for.
		return "", d, &fault.Error{Code: CodeCallConflict,
			Detail:    "call " + in.Call + " is an automatic id, and these arguments produce " + key,
			Hint:      "drop call= (the id follows from the arguments), or name the intent with an id not starting with " + autoPrefix,
			Retryable: true, Action: fault.ActionCorrectRequest}
	default:
		key = in.Call
	}
	return key, d, nil
}

// replayLocked is the record of key with digest d, its Replays counted,
// when the journal holds it (held), or call_conflict when key names
// another intent.
func (j *Journal) replayLocked(key string, d Digest) (rec Record, held bool, terr *fault.Error) {
	if e := j.records[key]; e != nil {
		if e.digest != d {
			return Record{}, false, conflict(key, e.rec.Tool)
		}
		e.rec.Replays++
		return e.rec, true, nil
	}
	tk := tombKeyOf(key)
	if t, ok := j.tombs[tk]; ok {
		if t.digest != [16]byte(d[:16]) {
			return Record{}, false, conflict(key, t.tool)
		}
		t.replays++
		j.tombs[tk] = t
		return t.record(key), true, nil
	}
	return Record{}, false, nil
}

// Replay is Begin for an intent that must not start now: the record it
// replays (its Replays counted) when the journal holds it, else held is
// false and nothing is recorded. Any refusal is Begin's.
func (j *Journal) Replay(in Intent) (rec Record, held bool, terr *fault.Error) {
	key, d, terr := identify(in)
	if terr != nil {
		return Record{}, false, terr
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.replayLocked(key, d)
}

func conflict(key, tool string) *fault.Error {
	return &fault.Error{Code: CodeCallConflict,
		Detail:    "call " + key + " already names a " + tool + " intent with other arguments",
		Hint:      "use a new call= id for a different operation, or drop call= and let the id follow from the arguments",
		Retryable: true, Action: fault.ActionCorrectRequest}
}

// Run is an executing intent, as its Exec sees it.
type Run struct {
	j   *Journal
	e   *entry
	tag uint64
}

// Running marks the intent running (once; later calls do nothing).
func (r *Run) Running() {
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	if r.e.rec.State == Pending {
		r.e.rec.State, r.e.rec.Started = Running, r.j.now()
	}
}

// SetTag sets the record's Tag, applied when the intent finishes.
func (r *Run) SetTag(t uint64) { r.tag = t }

// Call is the intent's call id.
func (r *Run) Call() string { return r.e.rec.Call }

func (j *Journal) execute(ctx context.Context, e *entry, exec Exec) {
	run := &Run{j: j, e: e}
	var res any
	var terr *fault.Error
	if err := j.logStart(e); errors.Is(err, errRemoved) {
		terr = &fault.Error{Code: CodeCancelled, Detail: "the session generation ended before the intent started",
			Hint: "fetch the Init URL again for the session's current URLs", Retryable: true, Action: fault.ActionRetryLater}
	} else if err != nil {
		// Write-ahead: what cannot be recorded as started does not start.
		terr = &fault.Error{Code: CodeJournalUnavailable, Detail: "the intent could not be recorded durably, so it did not run",
			Hint: "fetch the retry URL once the hub's state directory is writable again", Retryable: true, Action: fault.ActionRetryLater}
	} else {
		res, terr = j.invoke(ctx, run, exec)
	}
	var raw json.RawMessage
	if terr == nil {
		b, err := jsonw.Reflect(nil, res)
		if err != nil {
			terr = &fault.Error{Code: CodeExecutorPanic, Detail: "the result could not be encoded"}
		} else {
			raw = b
		}
	}
	j.mu.Lock()
	now := j.now()
	if e.rec.Started.IsZero() {
		e.rec.Started = now
	}
	e.rec.Finished, e.rec.Tag = now, run.tag
	if terr != nil {
		e.rec.State, e.rec.Err = Failed, terr
	} else {
		e.rec.State, e.rec.Result = Succeeded, raw
	}
	e.size = e.rec.size()
	if j.records[e.rec.Call] == e {
		j.bytes += e.size
		for j.bytes > j.maxBytes && j.evictOldestFinished(e.rec.Call) {
		}
	}
	close(e.done)
	rec := e.rec
	j.mu.Unlock()
	j.logDone(rec)
}

// invoke runs exec, turning a panic into a failed intent and refusing to
// start once ctx has ended (the bridge is stopping).
func (j *Journal) invoke(ctx context.Context, run *Run, exec Exec) (res any, terr *fault.Error) {
	defer func() {
		if p := recover(); p != nil {
			res, terr = nil, &fault.Error{Code: CodeExecutorPanic, Detail: "the executor failed unexpectedly; the intent will not run again",
				Hint: "fetch the retry URL to run it under a new identity", Retryable: true}
		}
	}()
	if ctx.Err() != nil {
		return nil, &fault.Error{Code: CodeCancelled, Detail: "the bridge stopped before the intent started",
			Hint: "fetch the retry URL to run it under a new identity", Retryable: true, Action: fault.ActionRetryLater}
	}
	return exec(ctx, run)
}

// evictOldestFinished drops the oldest finished record other than keep,
// leaving a tombstone, and reports whether there was one. j.mu is held.
func (j *Journal) evictOldestFinished(keep string) bool {
	for i, key := range j.order {
		e := j.records[key]
		if key == keep || !e.rec.State.Finished() {
			continue
		}
		j.order = append(j.order[:i], j.order[i+1:]...)
		delete(j.records, key)
		j.bytes -= e.size
		j.bury(key, e)
		return true
	}
	return false
}

func (j *Journal) bury(key string, e *entry) {
	tk := tombKeyOf(key)
	j.tombs[tk] = tomb{digest: [16]byte(e.digest[:16]), tool: e.rec.Tool, tag: e.rec.Tag, replays: int32(e.rec.Replays), failed: e.rec.State == Failed}
	j.tombSeq = append(j.tombSeq, tk)
	if len(j.tombSeq) > j.maxTombs {
		delete(j.tombs, j.tombSeq[0])
		j.tombSeq = j.tombSeq[1:]
	}
}

func (t tomb) record(key string) Record {
	state := Succeeded
	if t.failed {
		state = Failed
	}
	return Record{Call: key, Tool: t.tool, State: state, Tag: t.tag, Replays: int(t.replays), Evicted: true}
}

// Get returns the current record of a call id (a live record or a
// tombstone), without counting a replay.
func (j *Journal) Get(call string) (Record, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if e := j.records[call]; e != nil {
		return e.rec, true
	}
	if t, ok := j.tombs[tombKeyOf(call)]; ok {
		return t.record(call), true
	}
	return Record{}, false
}

// Wait returns the record of call once it has finished, or after d, or
// when ctx ends (the request went away), whichever is first. It never
// affects the execution.
func (j *Journal) Wait(ctx context.Context, call string, d time.Duration) (Record, bool) {
	j.mu.Lock()
	e := j.records[call]
	if e == nil {
		j.mu.Unlock()
		return j.Get(call)
	}
	rec, done := e.rec, e.done
	j.mu.Unlock()
	if rec.State.Finished() || d <= 0 {
		return rec, true
	}
	select {
	case <-done:
	case <-ctx.Done():
	case <-j.after(d):
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return e.rec, true
}

// Len is the number of records kept (tombstones not counted).
func (j *Journal) Len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.records)
}
