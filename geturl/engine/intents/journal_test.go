package intents

import (
	"context"
	"encoding/json"
	"regexp"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/fault"
)

// manualAfter is a Wait timer the test fires by hand.
type manualAfter struct {
	mu sync.Mutex
	ch []chan time.Time
}

func (m *manualAfter) After(time.Duration) <-chan time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := make(chan time.Time, 1)
	m.ch = append(m.ch, c)
	return c
}

func (m *manualAfter) fire() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.ch {
		c <- time.Time{}
	}
	m.ch = nil
}

func (m *manualAfter) armed() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.ch)
}

func fixed() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

func writeIntent(path, content string, n *atomic.Int32) Intent {
	return Intent{Tool: "write", Args: map[string]any{"path": path, "content": content}, Exec: func(ctx context.Context, r *Run) (any, *fault.Error) {
		r.Running()
		n.Add(1)
		return map[string]any{"path": path, "bytes": len(content)}, nil
	}}
}

var autoRE = regexp.MustCompile(`^auto:write:[0-9a-f]{16}$`)

func TestReplayRunsOnce(t *testing.T) {
	j := New(Options{Now: fixed})
	var n atomic.Int32
	rec, start, err := j.Begin(writeIntent("/project/a", "x", &n))
	if err != nil || start == nil || rec.State != Pending || !autoRE.MatchString(rec.Call) {
		t.Fatalf("first: %+v %v", rec, err)
	}
	start(context.Background())
	start(context.Background()) // a second call of start is a no-op
	for i := 1; i <= 3; i++ {
		again, start2, err := j.Begin(writeIntent("/project/a", "x", &n))
		if err != nil || start2 != nil || again.Call != rec.Call || again.Replays != i || again.State != Succeeded {
			t.Fatalf("replay %d: %+v %v", i, again, err)
		}
		if string(again.Result) != `{"bytes":1,"path":"/project/a"}` {
			t.Fatalf("result %s", again.Result)
		}
	}
	if n.Load() != 1 {
		t.Fatalf("executed %d times", n.Load())
	}
	// Another nonce, other content or another tool is another intent.
	for _, in := range []Intent{
		{Tool: "write", Args: map[string]any{"path": "/project/a", "content": "x"}, Run: "2"},
		{Tool: "write", Args: map[string]any{"path": "/project/a", "content": "y"}},
		{Tool: "edit", Args: map[string]any{"path": "/project/a", "content": "x"}},
	} {
		r, s, err := j.Begin(in)
		if err != nil || s == nil || r.Call == rec.Call {
			t.Fatalf("%+v: %+v %v", in, r, err)
		}
	}
}

// The identity is the arguments' value, not their map order; wait= and
// the transport never reach it (the caller leaves them out).
func TestIdentityIgnoresOrder(t *testing.T) {
	a, _ := Identity("plugin", map[string]any{"plugin": "p", "tool": "t", "args": json.RawMessage(`{"b":1,"a":[{"y":2,"x":"\u0041"}]}`)}, "")
	b, _ := Identity("plugin", map[string]any{"tool": "t", "args": json.RawMessage(` { "a" : [ {"x":"A","y":2} ] , "b":1 } `), "plugin": "p"}, "")
	if a != b {
		t.Fatal("same arguments, different identity")
	}
	c, _ := Identity("plugin", map[string]any{"tool": "t", "args": json.RawMessage(`{"a":[{"x":"A","y":2}],"b":1.0}`), "plugin": "p"}, "")
	if a == c {
		t.Fatal("1 and 1.0 must stay distinct spellings")
	}
}

func TestExplicitCall(t *testing.T) {
	j := New(Options{})
	var n atomic.Int32
	in := writeIntent("/project/a", "x", &n)
	in.Call = "my-call.1"
	rec, start, err := j.Begin(in)
	if err != nil || rec.Call != "my-call.1" || !rec.Explicit {
		t.Fatalf("%+v %v", rec, err)
	}
	start(context.Background())
	if _, s, err := j.Begin(in); err != nil || s != nil {
		t.Fatalf("replay of an explicit call: %v", err)
	}
	other := writeIntent("/project/a", "other", &n)
	other.Call = "my-call.1"
	if _, _, err := j.Begin(other); err == nil || err.Code != CodeCallConflict || !err.Retryable {
		t.Fatalf("reused call id: %v", err)
	}
	tool := in
	tool.Tool = "edit"
	if _, _, err := j.Begin(tool); err == nil || err.Code != CodeCallConflict {
		t.Fatalf("call id of another tool: %v", err)
	}
	both := in
	both.Run = "2"
	if _, _, err := j.Begin(both); err == nil || err.Code != fault.CodeConflictingParams {
		t.Fatalf("call with run: %v", err)
	}
	if n.Load() != 1 {
		t.Fatalf("executed %d times", n.Load())
	}
}

// Concurrent identical requests (an intermediary retrying while the first
// is in flight) produce one executor.
func TestConcurrentReplaysOneExecutor(t *testing.T) {
	j := New(Options{})
	var n, starts atomic.Int32
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, start, err := j.Begin(writeIntent("/project/a", "x", &n))
			if err != nil {
				t.Error(err)
			}
			if start != nil {
				starts.Add(1)
				start(context.Background())
			}
		}()
	}
	wg.Wait()
	rec, _ := j.Get(AutoID("write", mustIdentity(t, "write", map[string]any{"path": "/project/a", "content": "x"}, "")))
	if n.Load() != 1 || starts.Load() != 1 || rec.Replays != 63 {
		t.Fatalf("executions %d, starts %d, replays %d", n.Load(), starts.Load(), rec.Replays)
	}
}

func mustIdentity(t *testing.T, tool string, args any, run string) Digest {
	t.Helper()
	d, err := Identity(tool, args, run)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// States move pending → running → succeeded, Wait returns at the finish
// or when its timer fires (never on the wall clock here), and a failed
// intent keeps its structured error.
func TestStatesAndWait(t *testing.T) {
	clock := &manualAfter{}
	j := New(Options{After: clock.After})
	release, started := make(chan struct{}), make(chan struct{})
	rec, start, _ := j.Begin(Intent{Tool: "terminal", Args: map[string]any{"command": "make"}, Exec: func(ctx context.Context, r *Run) (any, *fault.Error) {
		r.Running()
		r.SetTag(7)
		close(started)
		<-release
		return map[string]any{"exitCode": 0}, nil
	}})
	if rec.State != Pending {
		t.Fatal(rec.State)
	}
	go start(context.Background())
	<-started
	if got, _ := j.Get(rec.Call); got.State != Running || got.Started.IsZero() {
		t.Fatalf("%+v", got)
	}
	waited := make(chan Record)
	go func() { r, _ := j.Wait(context.Background(), rec.Call, time.Second); waited <- r }()
	for clock.armed() == 0 {
		time.Sleep(time.Millisecond)
	}
	clock.fire()
	if r := <-waited; r.State != Running {
		t.Fatalf("timer fired: %+v", r)
	}
	go func() { r, _ := j.Wait(context.Background(), rec.Call, time.Second); waited <- r }()
	for clock.armed() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	if r := <-waited; r.State != Succeeded || r.Tag != 7 || string(r.Result) != `{"exitCode":0}` {
		t.Fatalf("finished: %+v", r)
	}

	fail := &fault.Error{Code: "stale_read", Detail: "changed", Hint: "read it again", Retryable: true, Action: fault.ActionRereadThenRetry}
	rec, start, _ = j.Begin(Intent{Tool: "write", Args: map[string]any{"path": "/project/b"}, Exec: func(context.Context, *Run) (any, *fault.Error) { return nil, fail }})
	start(context.Background())
	got, _ := j.Wait(context.Background(), rec.Call, 0)
	if got.State != Failed || got.Err != fail || got.Result != nil {
		t.Fatalf("%+v", got)
	}
	if _, ok := j.Get("auto:write:0000000000000000"); ok {
		t.Fatal("unknown call found")
	}
}

func TestPanicAndCancelFailTheIntent(t *testing.T) {
	j := New(Options{})
	rec, start, _ := j.Begin(Intent{Tool: "write", Args: "p", Exec: func(context.Context, *Run) (any, *fault.Error) { panic("boom") }})
	start(context.Background())
	if got, _ := j.Get(rec.Call); got.State != Failed || got.Err.Code != CodeExecutorPanic || !got.Err.Retryable {
		t.Fatalf("%+v", got)
	}
	ran := false
	rec, start, _ = j.Begin(Intent{Tool: "write", Args: "q", Exec: func(context.Context, *Run) (any, *fault.Error) { ran = true; return nil, nil }})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start(ctx)
	if got, _ := j.Get(rec.Call); ran || got.State != Failed || got.Err.Code != CodeCancelled {
		t.Fatalf("%+v ran=%v", got, ran)
	}
}

// Past MaxRecords the oldest finished record is evicted; with none
// finished nothing new is recorded. An evicted record's tombstone still
// stops a replay from executing.
func TestBoundsAndTombstones(t *testing.T) {
	j := New(Options{MaxRecords: 3, MaxTombstones: 2})
	var n atomic.Int32
	block := make(chan struct{})
	var starts []func(context.Context)
	for i := range 3 {
		_, start, err := j.Begin(Intent{Tool: "write", Args: i, Exec: func(context.Context, *Run) (any, *fault.Error) {
			n.Add(1)
			<-block
			return "done", nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		starts = append(starts, start)
	}
	if _, _, err := j.Begin(writeIntent("/project/z", "", &n)); err == nil || err.Code != CodeJournalFull || !err.Retryable {
		t.Fatalf("full journal: %v", err)
	}
	close(block)
	for _, s := range starts {
		s(context.Background())
	}
	_, start, err := j.Begin(writeIntent("/project/z", "", &n))
	if err != nil {
		t.Fatal(err)
	}
	start(context.Background())
	if j.Len() != 3 {
		t.Fatalf("%d records", j.Len())
	}
	// Intent 0 was evicted: its replay answers from the tombstone.
	rec, s, err := j.Begin(Intent{Tool: "write", Args: 0})
	if err != nil || s != nil || !rec.Evicted || rec.State != Succeeded || rec.Replays != 1 {
		t.Fatalf("tombstone replay: %+v %v", rec, err)
	}
	if rec, _, err := j.Begin(Intent{Tool: "write", Args: 99, Call: rec.Call}); err == nil || err.Code != CodeCallConflict {
		t.Fatalf("an explicit call= named like the evicted auto id with other arguments: %+v", rec)
	}
	// The same arguments under the auto id spelled as call= are the same intent.
	if rec, s, err := j.Begin(Intent{Tool: "write", Args: 0, Call: rec.Call}); err != nil || s != nil || rec.Replays != 2 {
		t.Fatalf("%+v %v", rec, err)
	}
	if n.Load() != 4 {
		t.Fatalf("executions %d", n.Load())
	}
	// Tombstones are bounded too.
	for i := 10; i < 14; i++ {
		_, s, _ := j.Begin(Intent{Tool: "write", Args: i, Exec: func(context.Context, *Run) (any, *fault.Error) { return "x", nil }})
		s(context.Background())
	}
	if len(j.tombs) != 2 || len(j.tombSeq) != 2 {
		t.Fatalf("%d tombstones", len(j.tombs))
	}
}

// With the default bound, an intent 30,000 mutations old still replays
// from its tombstone instead of running again; the cost per tombstone is
// logged.
func TestTombstonesOutlastALongSession(t *testing.T) {
	if testing.Short() {
		t.Skip("30,000 intents")
	}
	j := New(Options{MaxRecords: 4})
	var n atomic.Int32
	_, start, _ := j.Begin(writeIntent("/project/first", "v1", &n))
	start(context.Background())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const later = 30_000
	for i := range later {
		_, s, err := j.Begin(Intent{Tool: "edit", Args: i, Exec: func(context.Context, *Run) (any, *fault.Error) { return nil, nil }})
		if err != nil {
			t.Fatal(err)
		}
		s(context.Background())
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	rec, s, err := j.Begin(writeIntent("/project/first", "v1", &n))
	if err != nil || s != nil || !rec.Evicted || n.Load() != 1 {
		t.Fatalf("the first intent after %d more: %+v, %v, ran %d times", later, rec, err, n.Load())
	}
	t.Logf("%d tombstones: %.0f bytes each", len(j.tombs), float64(after.HeapAlloc-before.HeapAlloc)/float64(len(j.tombs)))
}

func TestByteBound(t *testing.T) {
	j := New(Options{MaxBytes: 1000})
	big := make([]byte, 600)
	for i := range big {
		big[i] = 'a'
	}
	var calls []string
	for i := range 3 {
		rec, s, _ := j.Begin(Intent{Tool: "write", Args: i, Exec: func(context.Context, *Run) (any, *fault.Error) { return string(big), nil }})
		s(context.Background())
		calls = append(calls, rec.Call)
	}
	if j.Len() != 1 {
		t.Fatalf("%d records kept under a 1000-byte bound", j.Len())
	}
	if got, _ := j.Get(calls[2]); got.Evicted || got.Result == nil {
		t.Fatal("the newest result must stay")
	}
	if got, _ := j.Get(calls[0]); !got.Evicted {
		t.Fatal("the oldest must be a tombstone")
	}
}

func TestDeriveRun(t *testing.T) {
	a := DeriveRun("auto:terminal:0123456789abcdef", "repeat", 3)
	if a != DeriveRun("auto:terminal:0123456789abcdef", "repeat", 3) || !NonceRE.MatchString(a) || len(a) > 64 {
		t.Fatalf("%q", a)
	}
	for _, b := range []string{
		DeriveRun("auto:terminal:0123456789abcdef", "repeat", 4),
		DeriveRun("auto:terminal:0123456789abcdef", "retry", 3),
		DeriveRun("auto:terminal:0123456789abcdee", "repeat", 3),
	} {
		if a == b {
			t.Fatalf("%q repeated", a)
		}
	}
}

// An explicit call= in the auto: namespace must not take the id that
// other arguments produce: that would turn the later plain request for
// those arguments into a call_conflict it never asked for (a request
// without call=) and block the operation for the session's lifetime.
// call= may still spell out the id its own arguments produce.
func TestExplicitCallCannotSquatAnAutoID(t *testing.T) {
	j := New(Options{})
	var n atomic.Int32
	real := writeIntent("/project/a", "real", &n)
	d := mustIdentity(t, real.Tool, real.Args, "")
	squat := writeIntent("/project/decoy", "decoy", &n)
	squat.Call = AutoID(real.Tool, d)
	if _, s, err := j.Begin(squat); err == nil || err.Code != CodeCallConflict || s != nil {
		t.Fatalf("call= naming another intent's auto id: %v", err)
	}
	rec, start, err := j.Begin(real)
	if err != nil || start == nil || rec.Call != squat.Call {
		t.Fatalf("the plain request after the refused squat: %+v %v", rec, err)
	}
	start(context.Background())
	same := real
	same.Call = rec.Call
	if _, s, err := j.Begin(same); err != nil || s != nil {
		t.Fatalf("call= spelling the arguments' own auto id is a replay: %v", err)
	}
	if n.Load() != 1 {
		t.Fatalf("executed %d times", n.Load())
	}
}

// Replay finds a held intent (counting the replay) and records nothing
// for one it does not hold; a call= id naming other arguments is refused
// as Begin refuses it.
func TestReplayOnlyFindsHeldIntents(t *testing.T) {
	j := New(Options{Now: fixed})
	var n atomic.Int32
	if _, held, err := j.Replay(writeIntent("/project/a", "x", &n)); held || err != nil || j.Len() != 0 {
		t.Fatalf("held %v, err %v, %d records", held, err, j.Len())
	}
	rec, start, _ := j.Begin(writeIntent("/project/a", "x", &n))
	start(context.Background())
	again, held, err := j.Replay(writeIntent("/project/a", "x", &n))
	if !held || err != nil || again.Call != rec.Call || again.Replays != 1 || again.State != Succeeded || n.Load() != 1 {
		t.Fatalf("%+v %v %v, executed %d", again, held, err, n.Load())
	}
	other := writeIntent("/project/a", "y", &n)
	other.Call = rec.Call
	if _, held, err := j.Replay(other); held || err == nil || err.Code != CodeCallConflict {
		t.Fatalf("conflict: %v %v", held, err)
	}
}
