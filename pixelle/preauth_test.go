package pixelle

import (
	"net/http"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub/ws"
)

// 150 sockets that upgrade /relay and declare a 2 MiB frame without a
// hello cost a few MiB, not 2 MiB each.
func TestPreAuthFloodCostsLittle(t *testing.T) {
	r := startRelay(t, nil)
	adaptertest.PreAuthFloodCostsLittle(t, r.WSURL("/relay"), adaptertest.DialOptions{Origin: website}, DefaultMaxMessage)
}

// At most ws.DefaultMaxUnauthenticated relay sockets may wait for their
// hello; the next upgrade is refused with 503 TOO_MANY_CONNECTIONS (not a
// 1008, which would make the browser drop its credentials), and a socket
// that authenticates frees its place.
func TestUnauthenticatedCapped(t *testing.T) {
	r := startRelay(t, nil)
	id, tok := r.createSession(t)
	var idle []*adaptertest.WSClient
	for range ws.DefaultMaxUnauthenticated {
		idle = append(idle, r.dial(t, website, nil))
	}
	c, err := r.Dial("/relay", adaptertest.DialOptions{Origin: website})
	if err == nil || c.Status() != http.StatusServiceUnavailable {
		t.Fatalf("upgrade over the cap: err %v, status %d", err, c.Status())
	}
	sendJSON(t, idle[0], map[string]string{"type": "hello", "role": "browser", "sessionId": id, "token": tok})
	if m := next(t, idle[0]); m["type"] != "ready" {
		t.Fatalf("hello answered %v", m)
	}
	adaptertest.WaitFor(t, "a free place", func() bool {
		c, err := r.Dial("/relay", adaptertest.DialOptions{Origin: website})
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}
