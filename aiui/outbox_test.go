package aiui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/aiui/intent"
)

func newTestOutbox(t *testing.T, limit int) *Outbox {
	dirs := adaptertest.TempDirs(t)
	o, err := openOutbox(dirs, limit, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// next is the next event of f's queue as its stream writes it (the queue
// holds references; the prompt is read from the record).
func next(t *testing.T, o *Outbox, f *face) FaceEvent {
	t.Helper()
	select {
	case ev := <-f.ch:
		if ev.pageTools != nil {
			return FaceEvent{Type: "page-tools", PageTools: ev.pageTools}
		}
		var buf bytes.Buffer
		if ok, err := o.writeFaceEvent(&buf, ev.prompt); !ok || err != nil {
			t.Fatalf("prompt %d not written: %v", ev.prompt.seq, err)
		}
		var out FaceEvent
		if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
			t.Fatalf("face event %q: %v", buf.Bytes(), err)
		}
		return out
	case <-time.After(time.Second):
		t.Fatal("no event")
	}
	return FaceEvent{}
}

// nextFollowed is the next prompt a following shell prints.
func nextFollowed(t *testing.T, o *Outbox, fl *follower) Record {
	t.Helper()
	var buf bytes.Buffer
	ref := <-fl.ch
	if ok, err := o.writeRecord(&buf, "", ref, "", "\n"); !ok || err != nil {
		t.Fatalf("followed prompt not written: %v", err)
	}
	o.printed(ref)
	var r Record
	if err := json.Unmarshal(buf.Bytes(), &r); err != nil {
		t.Fatalf("followed prompt %q: %v", buf.Bytes(), err)
	}
	return r
}

func TestOutboxPendingUntilAFaceAttaches(t *testing.T) {
	o := newTestOutbox(t, 10)
	o.Deliver(channel.Prompt{Text: "early"})
	if o.Pending() != 1 {
		t.Fatal("prompt with no face is not pending")
	}
	f := o.Attach("f1", "/repo")
	if ev := next(t, o, f); ev.Prompt == nil || ev.Prompt.Text != "early" || ev.Prompt.Meta["kind"] != "prompt" {
		t.Fatalf("event = %+v", ev)
	}
	if o.Pending() != 0 {
		t.Fatal("still pending after attach")
	}
}

func TestOutboxRouting(t *testing.T) {
	o := newTestOutbox(t, 10)
	app := o.Attach("app", "/work/app")
	other := o.Attach("other", "/work/other")
	root := o.Attach("root", "/work")
	tests := []struct {
		root string
		want *face
	}{
		{"/work/app", app},
		{"/work/app/src", app},
		{"/work/other", other},
		{"/work/third", root},
		{"/elsewhere", root}, // most recently active (attached last)
		{"", root},
	}
	for _, tt := range tests {
		o.Deliver(channel.Prompt{Text: tt.root, Root: tt.root})
		if ev := next(t, o, tt.want); ev.Prompt.Text != tt.root {
			t.Fatalf("root %q went elsewhere", tt.root)
		}
	}
	o.Touch("other")
	o.Deliver(channel.Prompt{Text: "x", Root: "/elsewhere"})
	if ev := next(t, o, other); ev.Prompt.Text != "x" {
		t.Fatal("most recently active face did not get the prompt")
	}
	// a face that detaches without confirming hands its prompt back
	o.Deliver(channel.Prompt{Text: "lost", Root: "/work/app"})
	ev := next(t, o, app)
	o.Detach(app, []int64{ev.Prompt.Seq})
	if ev := next(t, o, root); ev.Prompt.Text != "lost" {
		t.Fatalf("re-routed to %+v", ev)
	}
}

func TestOutboxRecordIsBoundedAndPersistent(t *testing.T) {
	o := newTestOutbox(t, 3)
	for _, s := range []string{"1", "2", "3", "4"} {
		o.Deliver(channel.Prompt{Text: s})
	}
	recs := ReadRecord(o.path)
	if len(recs) != 3 || recs[0].Text != "2" || recs[2].Seq != 4 {
		t.Fatalf("record = %+v", recs)
	}
	snap, _ := o.Follow(false)
	if len(snap) != 3 || snap[0].to != "shell" || o.Pending() != 0 || ReadRecord(o.path)[0].DeliveredTo != "shell" {
		t.Fatalf("shell read did not take the pending prompts: %+v", snap)
	}
}

// TestIntentV1OverWS drives a full intent-v1 turn over a real socket: the
// shot is saved under the trace blob store on arrival and the prompt's
// meta maps shot_1 to that absolute path.
func TestIntentV1OverWS(t *testing.T) {
	h, _ := start(t, nil)
	c := h.MustDial("/ws", adaptertest.DialOptions{})
	root := "/repo/workbench"
	// a full trace history: the new turn's trace replaces the oldest
	traces := filepath.Join(projectDir(h.Dirs, root), "traces")
	for i := range keepTraceDirs {
		p := filepath.Join(traces, fmt.Sprintf("old-%03d", i))
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-time.Duration(i+1) * time.Minute)
		os.Chtimes(p, at, at)
	}
	if r := sendAck(t, c, mustFrame(t, frame.Envelope{V: 1, Kind: "hello", Format: "intent-v1",
		Meta: &frame.HelloMeta{Source: &frame.SourceInfo{Root: root}, Intent: json.RawMessage(`{"transcriber":"mock"}`)}}, nil)); !r.OK {
		t.Fatalf("hello: %+v", r)
	}
	b, _ := os.ReadFile("intent/testdata/ink-and-region-shot.json")
	var ev []intent.Event
	json.Unmarshal(b, &ev)
	batch, _ := json.Marshal(intent.Batch{Events: ev})
	if r := sendAck(t, c, mustFrame(t, frame.Envelope{V: 1, Kind: "data", ThreadID: "turn", Chunk: &frame.ChunkDescriptor{Kind: "events"}}, batch)); !r.OK {
		t.Fatalf("events: %+v", r)
	}
	png := []byte("\x89PNG\r\n\x1a\nfake")
	if r := sendAck(t, c, mustFrame(t, frame.Envelope{V: 1, Kind: "data", ThreadID: "turn", Chunk: &frame.ChunkDescriptor{Kind: "attachment", ID: "shot_1", Mime: "image/png"}}, png)); !r.OK {
		t.Fatalf("attachment: %+v", r)
	}
	if r := sendAck(t, c, mustFrame(t, frame.Envelope{V: 1, Kind: "data", ThreadID: "turn", Fin: true}, nil)); !r.OK || !r.Closed {
		t.Fatalf("fin: %+v", r)
	}
	recs := records(t, h)
	if len(recs) != 1 {
		t.Fatalf("records = %+v", recs)
	}
	path := recs[0].Meta["shot_1"]
	wantDir := projectDir(h.Dirs, root)
	if !strings.HasPrefix(path, filepath.Join(wantDir, "traces")+"/") || !strings.HasSuffix(path, "/shot_1.png") {
		t.Fatalf("shot path %q not under %s/traces", path, wantDir)
	}
	if got, _ := os.ReadFile(path); string(got) != string(png) {
		t.Fatal("shot bytes not saved")
	}
	if left, _ := os.ReadDir(traces); len(left) != keepTraceDirs {
		t.Fatalf("%d trace directories, want %d", len(left), keepTraceDirs)
	}
	if _, err := os.Stat(filepath.Join(traces, fmt.Sprintf("old-%03d", keepTraceDirs-1))); !os.IsNotExist(err) {
		t.Fatalf("the oldest trace directory was kept (%v)", err)
	}
	if !strings.Contains(recs[0].Text, "{shot_1} region") || recs[0].Meta["format"] != "intent-v1" {
		t.Fatalf("prompt = %+v", recs[0])
	}
	// the trace shows the lowering stages
	r := h.Do(adaptertest.Request{Path: "/debug/api/traces"})
	for _, stage := range []string{"client context", "speculative compose", "condition", "composed intent", "lowered prompt"} {
		if !strings.Contains(string(r.Body), `"stage":"`+stage+`"`) {
			t.Errorf("trace lacks stage %q", stage)
		}
	}
}

func TestOutboxFullFaceQueueRetries(t *testing.T) {
	o := newTestOutbox(t, 1000)
	f := o.Attach("slow", "")
	for i := range cap(f.ch) + 5 {
		o.Deliver(channel.Prompt{Text: fmt.Sprint(i)})
	}
	if o.Pending() != 5 {
		t.Fatalf("pending = %d, want the 5 that did not fit", o.Pending())
	}
	for range cap(f.ch) {
		<-f.ch
	}
	o.Retry()
	if o.Pending() != 0 || len(f.ch) != 5 {
		t.Fatalf("after retry: pending %d queued %d", o.Pending(), len(f.ch))
	}
}

func TestOutboxFollowerReadsWhenNoFace(t *testing.T) {
	o := newTestOutbox(t, 10)
	_, fl := o.Follow(true)
	o.Deliver(channel.Prompt{Text: "seen by the shell"})
	if r := nextFollowed(t, o, fl); r.Text != "seen by the shell" || o.Pending() != 0 {
		t.Fatalf("follower: %+v pending %d", r, o.Pending())
	}
	o.Unfollow(fl, nil)
}

// TestOutboxSharedRecordMerges: two backends writing the same record file
// keep each other's prompts.
func TestOutboxSharedRecordMerges(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, _ := openOutbox(dirs, 10, log)
	b, _ := openOutbox(dirs, 10, log)
	a.Deliver(channel.Prompt{Text: "from a"})
	b.Deliver(channel.Prompt{Text: "from b"})
	a.Deliver(channel.Prompt{Text: "from a again"})
	var texts []string
	for _, r := range ReadRecord(a.path) {
		texts = append(texts, r.Text)
	}
	if strings.Join(texts, "|") != "from a|from b|from a again" {
		t.Fatalf("record = %q", texts)
	}
}

// TestOutboxSyncHandsOnTheOtherBackendsPrompts: a prompt delivered to one
// backend reaches the face and the following shell attached to another
// backend on the same record at its next Sync (the backend runs one every
// RecordCheckInterval), in order, and is not handed on twice.
func TestOutboxSyncHandsOnTheOtherBackendsPrompts(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, _ := openOutbox(dirs, 10, log)
	b, _ := openOutbox(dirs, 10, log)
	t.Cleanup(func() { a.Close(); b.Close() })
	a.Deliver(channel.Prompt{Text: "before anyone attached"})
	f := b.Attach("face-on-b", "")
	_, fl := b.Follow(true)
	defer b.Unfollow(fl, nil)
	if ev := next(t, b, f); ev.Prompt == nil || ev.Prompt.Text != "before anyone attached" {
		t.Fatalf("attach: %+v", ev)
	}
	a.Deliver(channel.Prompt{Text: "to a, first"})
	a.Deliver(channel.Prompt{Text: "to a, second"})
	b.Sync()
	for _, want := range []string{"to a, first", "to a, second"} {
		if ev := next(t, b, f); ev.Prompt == nil || ev.Prompt.Text != want {
			t.Fatalf("face on b: %+v, want %q", ev, want)
		}
		if r := nextFollowed(t, b, fl); r.Text != want {
			t.Fatalf("follower on b: %q, want %q", r.Text, want)
		}
	}
	b.Sync()
	b.Deliver(channel.Prompt{Text: "to b"})
	if ev := next(t, b, f); ev.Prompt == nil || ev.Prompt.Text != "to b" {
		t.Fatalf("after a second sync: %+v", ev)
	}
	if r := nextFollowed(t, b, fl); r.Text != "to b" {
		t.Fatalf("follower after a second sync: %q", r.Text)
	}
	for _, r := range ReadRecord(a.path) {
		if r.DeliveredTo == "" {
			t.Errorf("%q is still pending in the record", r.Text)
		}
	}
}

// TestOutboxLaggingFollowerDoesNotSwallowPrompts: a prompt a following
// shell could not take (its queue is full) is not marked as read by it —
// it stays pending for the next face or shell read, never silently
// dropped.
func TestOutboxLaggingFollowerDoesNotSwallowPrompts(t *testing.T) {
	o := newTestOutbox(t, 1000)
	_, fl := o.Follow(true)
	defer o.Unfollow(fl, nil)
	n := cap(fl.ch) + 1
	for i := range n {
		o.Deliver(channel.Prompt{Text: fmt.Sprint("p", i)})
	}
	if p := o.Pending(); p != 1 {
		t.Fatalf("pending = %d after %d prompts to a follower holding %d, want 1", p, n, cap(fl.ch))
	}
	f := o.Attach("late-face", "")
	if ev := next(t, o, f); ev.Prompt == nil || ev.Prompt.Text != fmt.Sprint("p", n-1) {
		t.Fatalf("the prompt the follower missed did not reach the face: %+v", ev)
	}
}

// A prompt the shell took goes back to pending when every stream that
// held it went without printing it (Ctrl-C with prompts still queued, a
// cut stream, a `hub aiui prompts` that died mid-snapshot): a face
// attaching later gets it. One printed by any shell stays read, and a
// face's prompt that a shell was shown is not the shell's to give back.
func TestOutboxShellGivesBackWhatItDidNotPrint(t *testing.T) {
	o := newTestOutbox(t, 10)
	_, a := o.Follow(true)
	_, b := o.Follow(true)
	for _, s := range []string{"both print", "a prints", "none prints"} {
		o.Deliver(channel.Prompt{Text: s})
	}
	nextFollowed(t, o, a)
	nextFollowed(t, o, a)
	nextFollowed(t, o, b)
	o.Unfollow(a, nil)
	if got := o.Pending(); got != 0 {
		t.Fatalf("pending %d while b still holds what a did not print, want 0", got)
	}
	o.Unfollow(b, nil)
	if got := o.Pending(); got != 1 {
		t.Fatalf("pending %d once both followers went, want 1 (none prints)", got)
	}

	// a shell read that died after the first line of its snapshot
	o.Deliver(channel.Prompt{Text: "pending, snapshotted"})
	snap, _ := o.Follow(false)
	if o.Pending() != 0 {
		t.Fatalf("the snapshot did not take the pending prompts")
	}
	var buf bytes.Buffer
	if ok, err := o.writeRecord(&buf, "", snap[0], snap[0].to, "\n"); !ok || err != nil {
		t.Fatal(err)
	}
	o.printed(snap[0])
	o.Unfollow(nil, snap[1:])
	if got := o.Pending(); got != 2 {
		t.Fatalf("pending %d after the snapshot was cut, want 2", got)
	}

	f := o.Attach("face", "")
	for _, want := range []string{"none prints", "pending, snapshotted"} {
		if ev := next(t, o, f); ev.Prompt == nil || ev.Prompt.Text != want {
			t.Fatalf("face got %+v, want %q", ev, want)
		}
	}
	_, c := o.Follow(true)
	o.Deliver(channel.Prompt{Text: "the face's"})
	o.Unfollow(c, nil) // shown to the shell, never printed
	if ev := next(t, o, f); ev.Prompt == nil || ev.Prompt.Text != "the face's" || o.Pending() != 0 {
		t.Fatalf("face got %+v, pending %d", ev, o.Pending())
	}
	var to []string
	for _, r := range ReadRecord(o.path) {
		to = append(to, r.DeliveredTo)
	}
	if want := "[shell shell mcp:face mcp:face mcp:face]"; fmt.Sprint(to) != want {
		t.Fatalf("deliveredTo: %v, want %s", to, want)
	}
}

// A stream still going when the outbox closes (a handler the server's
// grace ran out on) cannot give its prompts back itself: Close marks what
// the shell took and did not print as unread in the record.
func TestOutboxCloseGivesBackWhatNoShellPrinted(t *testing.T) {
	o := newTestOutbox(t, 10)
	_, fl := o.Follow(true)
	o.Deliver(channel.Prompt{Text: "printed"})
	o.Deliver(channel.Prompt{Text: "still queued"})
	nextFollowed(t, o, fl)
	o.Close()
	o.Unfollow(fl, nil) // after Close: nothing more to do
	var to []string
	for _, r := range ReadRecord(o.path) {
		to = append(to, r.Text+"="+r.DeliveredTo)
	}
	if want := "[printed=shell still queued=]"; fmt.Sprint(to) != want {
		t.Fatalf("record after Close: %v, want %s", to, want)
	}
}

// TestOutboxRecordIsBoundedInBytes: the record is bounded in bytes as
// well as in count (500 prompts of 4 MiB would otherwise be 2 GiB on
// disk); the newest prompts are kept. The file may carry up to three
// times as many bytes again in dead lines until a compaction.
func TestOutboxRecordIsBoundedInBytes(t *testing.T) {
	o := newTestOutbox(t, 1000)
	o.j.MaxBytes = 4 << 10
	for i := range 10 {
		o.Deliver(channel.Prompt{Text: fmt.Sprint(i, strings.Repeat("x", 1<<10))})
	}
	st, err := os.Stat(o.path)
	if err != nil {
		t.Fatal(err)
	}
	recs := ReadRecord(o.path)
	if st.Size() > 4*(4<<10) || len(recs) == 0 || len(recs) > 4 || !strings.HasPrefix(recs[len(recs)-1].Text, "9") {
		t.Fatalf("record: %d bytes, %d prompts", st.Size(), len(recs))
	}
	if o.j.Len() != len(recs) {
		t.Fatalf("memory indexes %d prompts, file %d", o.j.Len(), len(recs))
	}
}

// TestOutboxRoutedPromptSurvivesFallingOut: a prompt handed to a face
// reaches it even when newer prompts push it out of the record before the
// face reads it (the face's queue holds the prompt's line open).
func TestOutboxRoutedPromptSurvivesFallingOut(t *testing.T) {
	o := newTestOutbox(t, 1)
	f := o.Attach("slow", "")
	for _, s := range []string{"one", "two", "three"} {
		o.Deliver(channel.Prompt{Text: s})
	}
	if recs := ReadRecord(o.path); len(recs) != 1 {
		t.Fatalf("record holds %d prompts, want 1", len(recs))
	}
	for _, want := range []string{"one", "two", "three"} {
		if ev := next(t, o, f); ev.Prompt == nil || ev.Prompt.Text != want {
			t.Fatalf("face got %+v, want %q", ev.Prompt, want)
		}
	}
}

// A flood of prompts with no face (row 12 of the hardening issue): every
// unread prompt that falls out of the record is counted, but the warnings
// are thinned to the 1st, 2nd, 4th… with the running count.
func TestDroppedPromptWarningsAreThinned(t *testing.T) {
	var logs adaptertest.SyncBuffer
	o, err := openOutbox(adaptertest.TempDirs(t), 5, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	for i := range n {
		o.Deliver(channel.Prompt{Text: fmt.Sprint("p", i)})
	}
	lines := strings.Count(logs.String(), "an unread prompt is dropped")
	if lines == 0 || lines > 10 {
		t.Fatalf("%d warnings for %d dropped prompts, want about log2(n):\n%s", lines, n-5, logs.String())
	}
	if !strings.Contains(logs.String(), "count=256") {
		t.Fatalf("the thinned warnings do not carry the running count:\n%s", logs.String())
	}
}
