package stitchslop

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// Issue 28: every command goes to the tab at once, under its own id. Two
// commands in flight are both on the wire before either is answered, and
// answers in reverse order reach their own callers. (One at a time, the
// second never reached the page until the first was answered.)
func TestCommandsGoSideBySideAnsweredInReverse(t *testing.T) {
	b := startBridge(t, nil)
	p, _ := b.attach(map[string]any{"token": testToken})
	results := map[string]chan map[string]any{"first": make(chan map[string]any, 1), "second": make(chan map[string]any, 1)}
	for _, cmd := range []string{"first", "second"} {
		go func() {
			out, err := b.S.Call(context.Background(), cmd, nil)
			if err != nil {
				t.Error(err)
			}
			results[cmd] <- mustJSON(t, out)
		}()
	}
	f1, f2 := p.next(), p.next() // both on the wire, neither answered
	if f1["id"] == f2["id"] || f1["command"] == f2["command"] {
		t.Fatalf("two commands, one id or one name: %v %v", f1, f2)
	}
	p.send(map[string]any{"id": f2["id"], "ok": true, "was": f2["command"]})
	p.send(map[string]any{"id": f1["id"], "ok": true, "was": f1["command"]})
	for cmd, ch := range results {
		select {
		case m := <-ch:
			if m["was"] != cmd {
				t.Errorf("the caller of %s got the answer to %v", cmd, m["was"])
			}
		case <-time.After(frameWait):
			t.Fatalf("the call %s did not return", cmd)
		}
	}
}

// A caller that gives up loses only its own call; the one beside it is
// answered as usual.
func TestCallerGivingUpCostsOnlyItsCall(t *testing.T) {
	b := startBridge(t, nil)
	p, _ := b.attach(map[string]any{"token": testToken})
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan []byte, 1)
	go func() { out, _ := b.S.Call(ctx, "slow", nil); gaveUp <- out }()
	slow := p.next()
	other := make(chan []byte, 1)
	go func() { out, _ := b.S.Call(context.Background(), "other", nil); other <- out }()
	o := p.next()
	cancel()
	if m := mustJSON(t, <-gaveUp); m["error"] != "uncertain" || !contains(m["message"].(string), "gave up") {
		t.Fatalf("the abandoned call = %v", m)
	}
	p.send(map[string]any{"id": slow["id"], "ok": true}) // late: ignored
	p.send(map[string]any{"id": o["id"], "ok": true, "n": 7})
	if m := mustJSON(t, <-other); m["n"] != float64(7) {
		t.Fatalf("the other call = %v", m)
	}
}

// Two agents on one tab are reported, not serialised: /status lists
// each, with its calls in flight, and says several drive the tab.
func TestAgentsDrivingOneTabAreReported(t *testing.T) {
	b := startBridge(t, nil)
	p, _ := b.attach(map[string]any{"token": testToken})
	call := func(agent string) chan adaptertest.Response {
		ch := make(chan adaptertest.Response, 1)
		go func() {
			ch <- b.Do(adaptertest.Request{Method: "POST", Path: "/call", Body: []byte(`{"command":"hold"}`),
				Header: map[string][]string{KeyHeader: {b.S.Key()}, AgentHeader: {agent}}})
		}()
		return ch
	}
	a1, a2 := call("agent-one"), call("agent-two")
	f1, f2 := p.next(), p.next()
	st := b.S.Report()
	if len(st.Agents) != 2 || st.Agents[0].InFlight != 1 || st.Agents[1].InFlight != 1 || !contains(st.Message, "2 agents") {
		t.Fatalf("agents %+v, message %q", st.Agents, st.Message)
	}
	got := map[string]bool{}
	for _, a := range st.Agents {
		got[a.ID] = true
	}
	if !got["agent-one"] || !got["agent-two"] {
		t.Fatalf("agents %+v", st.Agents)
	}
	p.send(map[string]any{"id": f1["id"], "ok": true})
	p.send(map[string]any{"id": f2["id"], "ok": true})
	<-a1
	<-a2
	r := mustJSON(t, b.control("GET", "/status", "").Body)
	if agents, _ := r["agents"].([]any); len(agents) != 2 {
		t.Fatalf("/status agents = %v", r["agents"])
	}
}

// waitGoroutinesIn waits until n goroutines have fn on their stacks.
func waitGoroutinesIn(t testing.TB, fn string, n int) {
	t.Helper()
	buf := make([]byte, 1<<20)
	adaptertest.WaitFor(t, "goroutines in "+fn, func() bool {
		k := runtime.Stack(buf, true)
		return strings.Count(string(buf[:k]), fn) >= n
	})
}

// Args that are not UTF-8 never reach the tab: its browser would close the
// connection (1007) on such a text frame, dropping the tab mid-call.
func TestCallRefusesArgsNotUTF8(t *testing.T) {
	b := startBridge(t, nil)
	p, _ := b.attach(map[string]any{"token": testToken})
	if _, err := b.S.Call(context.Background(), "scene.describe", []byte("{\"a\":\"\xff\"}")); err == nil || !strings.Contains(err.Error(), "valid UTF-8") {
		t.Fatalf("err = %v, want a refusal naming UTF-8", err)
	}
	if m, err := p.Next(50 * time.Millisecond); err == nil {
		t.Fatalf("the call reached the page: %s", m.Data)
	}
}
