package opencode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/plugin"
)

// A prompt queued behind a running turn runs under the rules that turn
// started with, so a caller narrower than the turn's starter must not
// queue one: its ceiling would not bind it.
func TestBusyWorkerRefusesNarrowerCaller(t *testing.T) {
	root := t.TempDir()
	f := newFlakyOC(t, root)
	cfg := NewConfig()
	cfg.URL = f.URL
	p := New(cfg, Options{Owner: (&owner{err: errNoOwner}).get,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	full := plugin.Authority{Root: root, Write: true, Terminal: true}
	writeOnly := plugin.Authority{Root: root, Write: true}
	out := callOK(t, p, full, ToolWorker, `{"action":"start","prompt":"CALL_BASH:sleep 60"}`)
	id := str(out, "worker", "workerID")
	cont := func(action string) string {
		if action == "send" {
			return `{"action":"send","sessionID":"` + id + `","prompt":"CALL_BASH:touch x"}`
		}
		return `{"action":"continue","workerID":"` + id + `","prompt":"CALL_BASH:touch x"}`
	}
	f.mu.Lock()
	f.busy[id] = true
	f.mu.Unlock()

	for _, tc := range []struct{ tool, action string }{{ToolWorker, "continue"}, {ToolSession, "send"}} {
		_, prompts, _, _ := f.counts()
		pe := callErr(t, p, writeOnly, tc.tool, cont(tc.action))
		if pe.Code != CodeWorkerBusy || !pe.Retryable {
			t.Fatalf("%s on a busy worker by a write-only caller: %+v, want retryable %s", tc.action, pe, CodeWorkerBusy)
		}
		if _, after, _, _ := f.counts(); after != prompts {
			t.Fatalf("%s: the prompt was sent (%d -> %d)", tc.action, prompts, after)
		}
	}
	// The refusal still narrowed the worker, so a loop starting later
	// cannot run a shell; and it recorded no turn that was never sent.
	f.mu.Lock()
	var sess map[string]any
	for _, s := range f.sessions {
		if s["id"] == id {
			sess = s
		}
	}
	rules, _ := json.Marshal(sess["permission"])
	turns, _ := json.Marshal(dig(sess, "metadata", "getMcp", "turns"))
	f.mu.Unlock()
	if !strings.Contains(string(rules), `{"action":"deny","pattern":"*","permission":"bash"}`) {
		t.Fatalf("no bash deny after the refusal: %s", rules)
	}
	if strings.Count(string(turns), "msg_") != 1 {
		t.Fatalf("turns = %s, want only the first", turns)
	}

	// The widest caller may queue: nothing it queues runs with more.
	callOK(t, p, full, ToolWorker, cont("continue"))
	// Once the turn has ended, the narrower caller's prompt starts a loop
	// under its own ceiling.
	f.mu.Lock()
	delete(f.busy, id)
	f.mu.Unlock()
	callOK(t, p, writeOnly, ToolWorker, cont("continue"))
}
