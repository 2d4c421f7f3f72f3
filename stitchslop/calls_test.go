package stitchslop

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// One command at a time reaches the tab, whoever sends it: a second call
// waits for the first one's answer.
func TestCallsReachThePageOneAtATime(t *testing.T) {
	b := startBridge(t, nil)
	p, _ := b.attach(map[string]any{"token": testToken})
	results := make(chan []byte, 2)
	for i, cmd := range []string{"first", "second"} {
		go func() {
			out, err := b.S.Call(context.Background(), cmd, nil)
			if err != nil {
				t.Error(err)
			}
			results <- out
		}()
		waitGoroutinesIn(t, "stitchslop.(*run).Call(", i+1)
	}
	f1 := p.next()
	// The second command must not be on the wire before the first is answered.
	if m, err := p.Next(50 * time.Millisecond); err == nil {
		t.Fatalf("a second command reached the page while the first was pending: %s", m.Data)
	}
	p.send(map[string]any{"id": f1["id"], "ok": true, "n": 1})
	f2 := p.next()
	if f1["command"] == f2["command"] {
		t.Fatalf("the same command twice: %v %v", f1, f2)
	}
	p.send(map[string]any{"id": f2["id"], "ok": true, "n": 2})
	for range 2 {
		select {
		case <-results:
		case <-time.After(frameWait):
			t.Fatal("a call did not return")
		}
	}

	// A caller waiting for its turn can give up without sending anything.
	hold := make(chan struct{})
	go func() { b.S.Call(context.Background(), "slow", nil); close(hold) }()
	slow := p.next()
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { _, err := b.S.Call(ctx, "never", nil); gaveUp <- err }()
	waitGoroutinesIn(t, "stitchslop.(*run).Call(", 2)
	cancel()
	if err := <-gaveUp; err == nil || !contains(err.Error(), "gave up before the command was sent") {
		t.Fatalf("err = %v", err)
	}
	p.send(map[string]any{"id": slow["id"], "ok": true})
	<-hold
	if m, err := p.Next(50 * time.Millisecond); err == nil {
		t.Fatalf("the abandoned command reached the page: %s", m.Data)
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
