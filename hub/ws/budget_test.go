package ws

import (
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/lxzan/gws"
)

// budgetPeer is an authenticated socket whose frames the test writes raw,
// so it can stop halfway through one.
type budgetPeer struct {
	h *clientHandler
	c *gws.Conn
}

func budgetDial(t *testing.T, s *wsServer, conns chan *Conn) budgetPeer {
	t.Helper()
	p := budgetPeer{h: newClientHandler()}
	p.c = s.dial(t, p.h)
	<-conns
	p.c.WriteString("hello")
	if got := nextMsg(t, p.h); got != "hello" {
		t.Fatalf("hello echoed as %q", got)
	}
	return p
}

func (p budgetPeer) write(t *testing.T, b []byte) {
	t.Helper()
	if _, err := p.c.NetConn().Write(b); err != nil {
		t.Fatal(err)
	}
}

// noMessage fails if p gets a message or a close within a short while.
func (p budgetPeer) noMessage(t *testing.T, what string) {
	t.Helper()
	select {
	case m := <-p.h.msgs:
		t.Fatalf("%s: got a %d-byte message", what, len(m))
	case err := <-p.h.closed:
		t.Fatalf("%s: closed (%v)", what, err)
	case <-time.After(300 * time.Millisecond):
	}
}

const budgetMsg = 768 << 10

// A large message takes its bytes from the endpoint's budget as its header
// arrives and gives them back once handled; a second one that does not fit
// waits, unread, until then.
func TestBudgetHoldsALargeMessageUntilRoom(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 2)}
	b := hub.NewBudget(1 << 20)
	s := startWS(t, h, Options{MaxPayload: 1 << 20, Budget: b})
	a, c := budgetDial(t, s, h.conns), budgetDial(t, s, h.conns)

	big := clientFrame(gws.OpcodeBinary, make([]byte, budgetMsg))
	half := len(big) / 2
	a.write(t, big[:half])
	waitCond(t, "a's message to take its bytes", func() bool { return b.Free() == 1<<20-budgetMsg })

	c.write(t, big)
	c.noMessage(t, "c's message while a's holds the budget")
	if free := b.Free(); free != 1<<20-budgetMsg {
		t.Fatalf("free %d while c waits, want %d", free, 1<<20-budgetMsg)
	}

	a.write(t, big[half:])
	if got := nextMsg(t, a.h); len(got) != budgetMsg {
		t.Fatalf("a's echo is %d bytes", len(got))
	}
	if got := nextMsg(t, c.h); len(got) != budgetMsg {
		t.Fatalf("c's echo is %d bytes", len(got))
	}
	waitCond(t, "the budget to be whole again", func() bool { return b.Free() == 1<<20 })
}

// Messages up to hub.BudgetFloor, and fragments until their sum passes it,
// never touch the budget; once the sum passes it, the whole message is
// counted.
func TestBudgetCountsFragmentsPastTheFloor(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 1)}
	b := hub.NewBudget(1 << 20)
	s := startWS(t, h, Options{MaxPayload: 1 << 20, Budget: b})
	a := budgetDial(t, s, h.conns)

	a.write(t, clientFrame(gws.OpcodeBinary, make([]byte, hub.BudgetFloor)))
	if got := nextMsg(t, a.h); len(got) != hub.BudgetFloor {
		t.Fatalf("echo is %d bytes", len(got))
	}
	if free := b.Free(); free != 1<<20 {
		t.Fatalf("a message at the floor took %d bytes", 1<<20-free)
	}

	const part = 40 << 10
	first := wsFrame(byte(gws.OpcodeBinary), false, make([]byte, part))
	a.write(t, first)
	a.noMessage(t, "the first fragment")
	if free := b.Free(); free != 1<<20 {
		t.Fatalf("one fragment under the floor took %d bytes", 1<<20-free)
	}
	second := wsFrame(0, true, make([]byte, part))
	a.write(t, second[:len(second)-part/2])
	waitCond(t, "both fragments to be counted", func() bool { return b.Free() == 1<<20-2*part })
	a.write(t, second[len(second)-part/2:])
	if got := nextMsg(t, a.h); len(got) != 2*part {
		t.Fatalf("echo is %d bytes", len(got))
	}
	waitCond(t, "the budget to be whole again", func() bool { return b.Free() == 1<<20 })
}

// A message that finds no room within BudgetWait closes its socket with
// 1013; the one holding the budget is unaffected.
func TestBudgetWaitEndsWith1013(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 2)}
	b := hub.NewBudget(1 << 20)
	s := startWS(t, h, Options{MaxPayload: 1 << 20, Budget: b, BudgetWait: 100 * time.Millisecond})
	a, c := budgetDial(t, s, h.conns), budgetDial(t, s, h.conns)

	big := clientFrame(gws.OpcodeBinary, make([]byte, budgetMsg))
	a.write(t, big[:100])
	waitCond(t, "a's message to take its bytes", func() bool { return b.Free() == 1<<20-budgetMsg })
	c.write(t, big)
	if code := closeCode(waitClose(t, c.h)); code != 1013 {
		t.Fatalf("close code %d, want 1013", code)
	}
	a.write(t, big[100:])
	if got := nextMsg(t, a.h); len(got) != budgetMsg {
		t.Fatalf("a's echo is %d bytes", len(got))
	}
	waitCond(t, "the budget to be whole again", func() bool { return b.Free() == 1<<20 })
}

// A socket that goes away in the middle of a message gives its bytes back,
// and one waiting for room stops waiting when the server shuts down.
func TestBudgetReleasedOnCloseAndShutdown(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 2)}
	b := hub.NewBudget(1 << 20)
	s := startWS(t, h, Options{MaxPayload: 1 << 20, Budget: b})
	a, c := budgetDial(t, s, h.conns), budgetDial(t, s, h.conns)

	big := clientFrame(gws.OpcodeBinary, make([]byte, budgetMsg))
	a.write(t, big[:100])
	waitCond(t, "a's message to take its bytes", func() bool { return b.Free() == 1<<20-budgetMsg })
	a.c.NetConn().Close()
	waitCond(t, "a's bytes to come back", func() bool { return b.Free() == 1<<20 })

	a2 := budgetDial(t, s, h.conns)
	a2.write(t, big[:100])
	waitCond(t, "a2's message to take its bytes", func() bool { return b.Free() == 1<<20-budgetMsg })
	c.write(t, big) // waits for room that does not come
	c.noMessage(t, "c while a2 holds the budget")
	s.cancel()
	select {
	case err := <-s.done:
		s.done <- err // for startWS's cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop while a socket waited for room")
	}
	if free := b.Free(); free != 1<<20 {
		t.Fatalf("after shutdown %d bytes are still taken", 1<<20-free)
	}
}

// A message larger than the whole budget could never fit: it is refused
// with 1009 instead of waiting.
func TestBudgetRefusesAMessageLargerThanItself(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 1)}
	s := startWS(t, h, Options{MaxPayload: 1 << 20, Budget: hub.NewBudget(512 << 10)})
	a := budgetDial(t, s, h.conns)
	// The server may refuse on the header and close before the rest is
	// written: the write can fail with a reset, the close code still counts.
	a.c.NetConn().Write(clientFrame(gws.OpcodeBinary, make([]byte, budgetMsg)))
	if code := closeCode(waitClose(t, a.h)); code != 1009 {
		t.Fatalf("close code %d, want 1009", code)
	}
}
