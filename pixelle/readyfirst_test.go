package pixelle

import (
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// A browser's first frame is its ready, even while an agent of its
// session keeps sending commands as it (re)connects: a command the relay
// routed to it before ready was written could overtake the ready, and a
// page that is not connected yet in its own eyes has no business with it.
// The race is narrow, so this tries many reconnections.
func TestBrowserHearsReadyFirst(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	p.b.Close()
	<-p.b.Closed()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			p.a.SendText(cmdMsg("c", `{"method":"state.read"}`))
			time.Sleep(20 * time.Microsecond)
		}
	})
	defer func() { close(stop); wg.Wait() }()
	for i := range 500 {
		for deadline := time.Now().Add(wait); r.browserAttached(p.id); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the relay still holds the previous browser")
			}
		}
		c := r.dial(t, website, map[string]string{"type": "hello", "role": "browser", "sessionId": p.id, "token": p.browserToken})
		if m := next(t, c); m["type"] != "ready" {
			t.Fatalf("reconnection %d: the browser's first frame is %v, not ready", i, m["type"])
		}
		c.Close()
		<-c.Closed()
	}
}

// A command the in-process agent sends the moment its canvas's ready
// arrives reaches the canvas, after that ready: the browser is connected
// once it said hello, even while its ready is still being written.
func TestCommandRightAfterReadyIsDelivered(t *testing.T) {
	r := startRelay(t, nil)
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	bridgePair(t, r, b)
	for i := range 300 {
		b.Close()
		<-b.Closed()
		adaptertest.WaitFor(t, "browser detached", func() bool { return !r.browserAttached(id) })
		b = r.browser(t, id, tok)
		ch := bridgeCall(r, "state.read", `{}`)
		m, err := b.Next(wait)
		if err != nil {
			t.Fatalf("reconnection %d: no command: %v (the call returned %+v)", i, err, recv(t, ch))
		}
		var cmd map[string]any
		mustUnmarshal(t, m.Data, &cmd)
		if cmd["type"] != "command" {
			t.Fatalf("reconnection %d: got %v", i, cmd)
		}
		sendJSON(t, b, map[string]any{"type": "result", "id": cmd["id"], "result": map[string]any{}})
		if c := recv(t, ch); c.err != nil {
			t.Fatalf("reconnection %d: %v", i, c.err)
		}
	}
}
