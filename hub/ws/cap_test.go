package ws

import (
	"testing"

	"github.com/lxzan/gws"
)

// Issue 7: an endpoint holds at most MaxSockets authenticated sockets.
// One more that authenticates closes, with 1013, the one whose latest
// message is the oldest: sockets that said hello and went silent go
// first, a socket in use stays, and the newcomer is served.
func TestMaxSocketsClosesTheLongestSilent(t *testing.T) {
	s := startWS(t, &echoHandler{}, Options{MaxSockets: 2})
	type peer struct {
		c  *gws.Conn
		ch *clientHandler
	}
	dial := func() peer {
		t.Helper()
		p := peer{ch: newClientHandler()}
		p.c = s.dial(t, p.ch)
		p.c.WriteString("hello")
		if got := nextMsg(t, p.ch); got != "hello" {
			t.Fatalf("hello echoed %q", got)
		}
		return p
	}
	first, second := dial(), dial()
	first.c.WriteString("still here") // first is now the more recent
	if got := nextMsg(t, first.ch); got != "still here" {
		t.Fatalf("echo %q", got)
	}
	third := dial()
	if code := closeCode(waitClose(t, second.ch)); code != 1013 {
		t.Fatalf("the socket silent the longest closed with %d, want 1013", code)
	}
	for _, p := range []peer{first, third} {
		p.c.WriteString("ok?")
		if got := nextMsg(t, p.ch); got != "ok?" {
			t.Fatalf("a kept socket echoed %q", got)
		}
	}
	if n := s.ep.Authenticated(); n != 2 {
		t.Fatalf("%d authenticated sockets, want the cap, 2", n)
	}
	// A socket that has not authenticated does not count, and no socket
	// is closed to make room for it.
	s.dial(t, newClientHandler())
	waitCond(t, "the pending socket", func() bool { return s.ep.Unauthenticated() == 1 })
	if n := s.ep.Authenticated(); n != 2 {
		t.Fatalf("%d authenticated sockets with one pending, want 2", n)
	}
	for _, p := range []peer{first, third} {
		select {
		case err := <-p.ch.closed:
			t.Fatalf("a kept socket was closed: %v", err)
		default:
		}
	}
}
