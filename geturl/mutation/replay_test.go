package mutation_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/engine/intents"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/transport"
)

// The same URL fetched twice runs once: the second fetch answers the
// first's record. Every spelling of the same operation (another path
// spelling, content by content= or a staged blob, another wait=) is the
// same intent.
func TestReplayCollapse(t *testing.T) {
	e := newEnv(t, rw, nil)
	u := e.m + "/w?path=src/a.txt&wait=1500&raw=hello~n"
	first := e.done(u)
	if first.Replayed || !strings.HasPrefix(first.Call, "auto:write:") || e.file("src/a.txt") != "hello\n" {
		t.Fatalf("%s", first.raw)
	}
	// Someone else changes the file; a replay must not write it again.
	os.WriteFile(filepath.Join(e.root, "src/a.txt"), []byte("changed"), 0o644)
	again := e.done(u)
	if !again.Replayed || again.Replays != 1 || again.Call != first.Call || string(again.Result) != string(first.Result) {
		t.Fatalf("replay: %s", again.raw)
	}
	e.ok(e.m + "/s?blob=hello&i=0&count=1&raw=hello~n")
	for i, v := range []string{
		e.m + "/w?path=./src/a.txt&raw=hello~n",
		e.m + "/w?path=/project/src/a.txt&wait=0&raw=hello%0A",
		e.m + "/w?file=src//a.txt&content=hello~n",
		e.m + "/w?path=" + e.root + "/src/a.txt&blob=hello&count=1&wait=1000",
		e.m + "/w?path=src/x/../a.txt&blob=hello",
	} {
		a := e.done(v)
		if !a.Replayed || a.Call != first.Call || a.Replays != i+2 {
			t.Fatalf("%s: %s", v, a.raw)
		}
	}
	if e.file("src/a.txt") != "changed" {
		t.Fatal("a replay wrote the file again")
	}
	if e.sess.state.Journal.Len() != 1 {
		t.Fatalf("%d intents for one operation", e.sess.state.Journal.Len())
	}
}

// A replayed patch or edit would fail if it ran twice (the file exists,
// the old text is gone); a replay succeeds because it never runs.
func TestReplayOfPatchAndEdit(t *testing.T) {
	e := newEnv(t, rw, map[string]string{"e.txt": "one two\n"})
	add := e.m + "/a?wait=1500&raw=***+Begin+Patch~n***+Add+File:+new.txt~n~qfresh~n***+End+Patch~n"
	e.done(add)
	if a := e.done(add); !a.Replayed {
		t.Fatal(a.raw)
	}
	edit := e.m + "/e?path=e.txt&old=one&new=ONE&wait=1500"
	e.done(edit)
	if a := e.done(edit); !a.Replayed || e.file("e.txt") != "ONE two\n" {
		t.Fatal(a.raw)
	}
	// run= deliberately repeats it: a new identity that executes (and
	// here fails, the old text being gone), and its replay is itself.
	rerun := e.m + "/e?path=e.txt&old=one&new=ONE&run=2&wait=1500"
	a := e.fail(rerun, "edit_old_not_found")
	if a.Call == "" || a.AgentAction != fault.ActionRereadThenRetry {
		t.Fatal(a.raw)
	}
	if b := e.fail(rerun, "edit_old_not_found"); b.Call != a.Call || !strings.Contains(b.raw, `"replayed":true`) {
		t.Fatal(b.raw)
	}
}

// wait= out of range is refused before any intent exists, with the exact
// clamped URL as the repair; fetching the repair runs it.
func TestWaitOutOfRangeRefusedBeforeIntent(t *testing.T) {
	e := newEnv(t, rw, nil)
	for i, tc := range []struct{ wait, fixed string }{{"5000", "1500"}, {"-3", "0"}, {"99999999999999999999", "1500"}} {
		name := "w" + strconv.Itoa(i) + ".txt"
		u := e.m + "/w?path=" + name + "&wait=" + tc.wait + "&raw=x"
		a := e.fail(u, transport.CodeValueOutOfRange)
		want := e.m + "/w?path=" + name + "&wait=" + tc.fixed + "&raw=x"
		if a.Repair != want || a.AgentAction != fault.ActionFetchRepair {
			t.Fatalf("wait=%s: repair %q, want %q", tc.wait, a.Repair, want)
		}
		if e.sess.state.Journal.Len() != 0 || !e.missing(name) {
			t.Fatal("an out-of-range wait created an intent")
		}
		if i == 0 {
			e.done(a.Repair)
			if e.file(name) != "x" {
				t.Fatal("the repair URL did not write")
			}
			e.sess.state = mutation.NewState(&files.Ledger{}, nil)
		}
	}
	if e.do(e.m+"/j?call=auto:write:0123456789abcdef&wait=2000").Repair != e.m+"/j?call=auto:write:0123456789abcdef&wait=1500" {
		t.Fatal("/j wait is clamped the same way")
	}
	// The clamp composes with the other deterministic corrections: every
	// one of these is refused with the same exact repair, and none made
	// an intent.
	e.sess.state = mutation.NewState(&files.Ledger{}, nil)
	for _, q := range []string{
		"/w?path=c.txt&raw=x&wait=5000",           // misplaced after raw=, then clamped
		"/w?path=c.txt&wiat=5000&raw=x",           // a typo, then clamped
		"/w?path=c.txt&wait=5000&wait=5000&raw=x", // duplicated, then clamped
		"/w?path=c.txt&wait=01600&raw=x",          // leading zero
	} {
		if a := e.do(e.m + q); a.OK || a.Repair != e.m+"/w?path=c.txt&wait=1500&raw=x" {
			t.Errorf("%s: %s", q, a.raw)
		}
	}
	if e.sess.state.Journal.Len() != 0 || !e.missing("c.txt") {
		t.Fatal("a refused wait created an intent")
	}
}

func TestCallAndRun(t *testing.T) {
	e := newEnv(t, rw, nil)
	e.fail(e.m+"/w?path=a&call=mine&run=2&raw=x", transport.CodeConflictingParams)
	e.fail(e.m+"/w?path=a&call=bad%20id&raw=x", transport.CodeInvalidParameter)
	if e.sess.state.Journal.Len() != 0 || !e.missing("a") {
		t.Fatal("a refused request created an intent")
	}
	a := e.done(e.m + "/w?path=a&call=mine.1&wait=1500&raw=x")
	if a.Call != "mine.1" {
		t.Fatal(a.raw)
	}
	e.fail(e.m+"/w?path=a&call=mine.1&raw=y", intents.CodeCallConflict)
	if e.file("a") != "x" {
		t.Fatal("a conflicting call ran")
	}
	if b := e.done(e.m + "/w?path=a&call=mine.1&raw=x"); !b.Replayed {
		t.Fatal(b.raw)
	}
	// /j answers the record under its explicit id, without counting a replay.
	j := e.done(e.m + "/j?call=mine.1")
	if j.Replayed || j.Call != "mine.1" {
		t.Fatal(j.raw)
	}
	e.fail(e.m+"/j?call=auto:write:0123456789abcdef", intents.CodeUnknownCall)
}

// A pending intent answers a poll URL; the execution does not depend on
// the request that created it.
func TestPendingThenPoll(t *testing.T) {
	e := newEnv(t, rw, nil)
	unlock, err := e.host.ProjectGate().Lock(context.Background(), e.root) // another session's write in progress
	if err != nil {
		t.Fatal(err)
	}
	a := e.ok(e.m + "/w?path=p.txt&raw=queued")
	if (a.State != "pending" && a.State != "running") || a.Poll != e.m+"/j?call="+a.Call+"&wait=1000" || !e.missing("p.txt") {
		t.Fatalf("%s", a.raw)
	}
	if b := e.ok(e.m + "/w?path=p.txt&raw=queued"); !b.Replayed || b.Poll != a.Poll {
		t.Fatalf("%s", b.raw)
	}
	unlock()
	if got := e.done(a.Poll); got.Call != a.Call || e.file("p.txt") != "queued" {
		t.Fatalf("%s", got.raw)
	}
}

// Whole-file replacement needs a complete current read: a refusal keeps
// its structured error in the record, the URL fetched again answers the
// same failure (never running twice), and the retry URL — a fresh run=
// identity — succeeds after the read. A stale read is refused the same
// way.
func TestStaleReadRefusalAndRetry(t *testing.T) {
	e := newEnv(t, rw, map[string]string{"f.txt": "old\n", "g.txt": "g1\ng2\n"})
	u := e.m + "/w?path=f.txt&wait=1500&raw=new~n"
	a := e.fail(u, "read_required")
	if a.AgentAction != fault.ActionRereadThenRetry || !a.Retryable || !strings.HasPrefix(a.Retry, e.m+"/w?path=f.txt&wait=1500&run=retry.") || !strings.HasSuffix(a.Retry, "&raw=new~n") {
		t.Fatalf("%s", a.raw)
	}
	// The poll of the failed record keeps every field of the error.
	j := e.fail(e.m+"/j?call="+a.Call, "read_required")
	if j.Retry != a.Retry || j.AgentAction != a.AgentAction || j.ErrorDetail != a.ErrorDetail {
		t.Fatalf("poll %s vs %s", j.raw, a.raw)
	}
	e.ok(e.r + "/r?path=f.txt")
	if b := e.fail(u, "read_required"); b.Retry != a.Retry || !strings.Contains(b.raw, `"replayed":true`) {
		t.Fatalf("%s", b.raw)
	}
	e.done(a.Retry)
	if e.file("f.txt") != "new\n" {
		t.Fatal("retry did not write")
	}
	if b := e.done(a.Retry); !b.Replayed {
		t.Fatal("the retry URL is itself replay-safe")
	}

	e.ok(e.r + "/r?path=g.txt")
	os.WriteFile(filepath.Join(e.root, "g.txt"), []byte("g1\nchanged\n"), 0o644)
	s := e.fail(e.m+"/w?path=g.txt&wait=1500&raw=mine", "stale_read")
	if e.file("g.txt") != "g1\nchanged\n" || s.Retry == "" {
		t.Fatalf("%s", s.raw)
	}
	// Any mutation invalidates coverage: after an edit, a /w needs a new read.
	e.ok(e.r + "/r?path=g.txt")
	e.done(e.m + "/e?path=g.txt&old=changed&new=edited&wait=1500")
	e.fail(e.m+"/w?path=g.txt&wait=1500&raw=mine2", "read_required")
}

// Three distinct edits within 30 seconds (on the session's clock) make
// the third's result suggest one bulk patch.
func TestSerialEditHint(t *testing.T) {
	e := newEnv(t, rw, map[string]string{"s.txt": "a b c d\n"})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e.sess.state = mutation.NewState(&files.Ledger{}, func() time.Time { return now })
	var last answer
	for _, w := range []string{"a", "b", "c"} {
		last = e.done(e.m + "/e?path=s.txt&old=" + w + "&new=" + strings.ToUpper(w) + "&wait=1500")
		now = now.Add(5 * time.Second)
	}
	var res struct {
		SuggestedBulkPatch bool
		EfficiencyHint     string
	}
	json.Unmarshal(last.Result, &res)
	if !res.SuggestedBulkPatch || res.EfficiencyHint == "" {
		t.Fatalf("%s", last.raw)
	}
}

// A dropped connection never cancels a mutation: the request that created
// the intent goes away while it is queued, and it still runs, once.
func TestDroppedRequestDoesNotCancel(t *testing.T) {
	e := newEnv(t, rw, nil)
	unlock, err := e.host.ProjectGate().Lock(context.Background(), e.root)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.m+"/w?path=d.txt&wait=1500&raw=survives", nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := e.srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for e.sess.state.Journal.Len() == 0 { // the intent exists: the request is waiting on it
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the request was not dropped")
	}
	unlock()
	u := e.m + "/w?path=d.txt&raw=survives"
	a := e.ok(u)
	if !a.Replayed {
		t.Fatalf("%s", a.raw)
	}
	if a.State != "succeeded" {
		a = e.do(a.Poll)
	}
	if a.State != "succeeded" || e.file("d.txt") != "survives" {
		t.Fatalf("%s", a.raw)
	}
}

// A HEAD (a link previewer, a reader probing the type) never creates or
// runs an intent; the GET that follows runs it once.
func TestHeadRunsNothing(t *testing.T) {
	e := newEnv(t, rw, nil)
	for _, u := range []string{
		e.m + "/w?path=head.txt&wait=1500&raw=x",
		e.m + "/x?wait=1500&raw=touch%20head-x",
	} {
		pu, _ := url.Parse(u)
		req, _ := http.NewRequest("HEAD", e.srv.URL, nil)
		req.URL = &url.URL{Scheme: "http", Host: pu.Host, Opaque: strings.TrimPrefix(u, pu.Scheme+"://"+pu.Host)}
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("HEAD %s: %d", u, resp.StatusCode)
		}
	}
	if n := e.sess.state.Journal.Len(); n != 0 || !e.missing("head.txt") {
		t.Fatalf("HEADs created %d intents", n)
	}
	if a := e.done(e.m + "/w?path=head.txt&wait=1500&raw=x"); a.Replayed || e.file("head.txt") != "x" {
		t.Fatalf("the GET after a HEAD: %s", a.raw)
	}
}
