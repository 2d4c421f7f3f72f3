package pixelle

import (
	"sync"
	"testing"
	"time"
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
