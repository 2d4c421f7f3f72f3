package ws

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lxzan/gws"
)

// Before authentication every message is bounded, not just the first: a
// peer that is not refused by its first message (a /tools socket sending
// `{}`) must not then declare MaxPayload. The endpoint's own word comes
// first, then 1009.
func TestPreAuthLimit(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 3)}
	told := make(chan struct{}, 2)
	s := startWS(t, h, Options{MaxPayload: 1 << 20, PreAuth: PreAuth{Limit: 64, OnTooLarge: func(c *Conn) {
		c.WriteText([]byte("too big"))
		told <- struct{}{}
	}}})

	ch := newClientHandler()
	c := s.dial(t, ch)
	<-h.conns
	c.WriteString(strings.Repeat("x", 65))
	<-told
	if got := <-ch.msgs; got != "too big" {
		t.Fatalf("first word = %q", got)
	}
	if code := closeCode(waitClose(t, ch)); code != 1009 {
		t.Fatalf("close code %d, want 1009", code)
	}

	ch2 := newClientHandler()
	c2 := s.dial(t, ch2)
	<-h.conns
	c2.WriteString("not yet")
	if got := <-ch2.msgs; got != "not yet" {
		t.Fatalf("echo = %q", got)
	}
	c2.WriteString(strings.Repeat("z", 100))
	<-told
	if got := <-ch2.msgs; got != "too big" {
		t.Fatalf("second message before auth: %q", got)
	}
	if code := closeCode(waitClose(t, ch2)); code != 1009 {
		t.Fatalf("close code %d, want 1009", code)
	}
}

// A large message sent right behind the hello, without waiting for an
// answer, passes: the reader never looks past a frame the session has not
// seen, so the limit is off by the time the next header is judged.
func TestPreAuthPipelinedAfterHello(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 1)}
	s := startWS(t, h, Options{MaxPayload: 1 << 20, PreAuth: PreAuth{Limit: 64}})
	ch := newClientHandler()
	c := s.dial(t, ch)
	conn := <-h.conns
	// One write holding both frames, so they arrive in one segment.
	both := append(clientFrame(gws.OpcodeText, []byte("hello")), clientFrame(gws.OpcodeText, []byte(strings.Repeat("y", 100<<10)))...)
	if _, err := c.NetConn().Write(both); err != nil {
		t.Fatal(err)
	}
	if got := nextMsg(t, ch); got != "hello" {
		t.Fatalf("echo = %q", got)
	}
	if got := nextMsg(t, ch); len(got) != 100<<10 {
		t.Fatalf("pipelined message echoed %d bytes", len(got))
	}
	if !conn.IsAuthenticated() || s.ep.Unauthenticated() != 0 {
		t.Fatalf("authenticated %v, unauthenticated count %d", conn.IsAuthenticated(), s.ep.Unauthenticated())
	}
}

// nextMsg is the next message the client got; a close or a long silence
// fails the test.
func nextMsg(t *testing.T, h *clientHandler) string {
	t.Helper()
	select {
	case m := <-h.msgs:
		return m
	case err := <-h.closed:
		t.Fatalf("closed (%v) while waiting for a message", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no message")
	}
	return ""
}

// clientFrame is one masked client frame (a zero mask key: the bytes are
// the payload).
func clientFrame(op gws.Opcode, payload []byte) []byte {
	f := wsFrame(byte(op), true, payload)
	n := len(f) - len(payload)
	clear(f[n-4 : n])
	return f
}

// Upgrades beyond MaxPending unauthenticated sockets are refused with 503
// and Retry-After before anything is hijacked; a socket that authenticates
// or goes frees its slot.
func TestPreAuthCap(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 4)}
	s := startWS(t, h, Options{PreAuth: PreAuth{MaxPending: 2}})
	a, b := newClientHandler(), newClientHandler()
	ca := s.dial(t, a)
	cb := s.dial(t, b)
	<-h.conns
	<-h.conns
	_, resp, err := gws.NewClient(newClientHandler(), &gws.ClientOption{Addr: "ws://127.0.0.1:" + itoa(s.port) + "/"})
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third unauthenticated upgrade: err %v, resp %+v", err, resp)
	}
	ca.WriteString("hello")
	<-a.msgs
	waitCond(t, "a slot freed by authentication", func() bool { return s.ep.Unauthenticated() == 1 })
	c := s.dial(t, newClientHandler())
	<-h.conns
	cb.WriteClose(1000, nil)
	c.WriteClose(1000, nil)
	waitCond(t, "slots freed by closes", func() bool { return s.ep.Unauthenticated() == 0 })
	if h.opened.Load() != 3 {
		t.Fatalf("opened %d sockets, want 3", h.opened.Load())
	}
}

func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// pipeClient dials ep over net.Pipe (real sockets cannot run in a synctest
// bubble).
func pipeClient(t *testing.T, ep *Endpoint) (*gws.Conn, *clientHandler) {
	t.Helper()
	srv, cli := net.Pipe()
	go func() {
		req, err := http.ReadRequest(bufio.NewReader(srv))
		if err != nil {
			srv.Close()
			return
		}
		ep.ServeConn(srv, req)
	}()
	h := newClientHandler()
	c, _, err := gws.NewClientFromConn(h, &gws.ClientOption{Addr: "ws://127.0.0.1/"}, cli)
	if err != nil {
		t.Fatal(err)
	}
	go c.ReadLoop()
	return c, h
}

// The authentication deadline closes a socket that did not authenticate
// with 1008, after the endpoint's word; an authenticated one stays, and so
// does one whose session is still deciding on its hello when the deadline
// passes.
func TestPreAuthDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sockets := &Sockets{}
		var timedOut atomic.Int32
		slow := &slowHello{}
		ep := sockets.Endpoint(slow, Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), PreAuth: PreAuth{
			Timeout: 10 * time.Second,
			OnTimeout: func(c *Conn) {
				timedOut.Add(1)
				c.WriteText([]byte("auth_timeout"))
			}}})
		idle, idleH := pipeClient(t, ep)
		fast, fastH := pipeClient(t, ep)
		deciding, decidingH := pipeClient(t, ep)
		synctest.Wait()
		fast.WriteString("hello")
		time.Sleep(time.Second)
		deciding.WriteString("slow hello") // decided 15 s later, past the deadline
		synctest.Wait()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got := <-idleH.msgs; got != "auth_timeout" {
			t.Fatalf("idle socket was told %q", got)
		}
		if code := closeCode(<-idleH.closed); code != 1008 {
			t.Fatalf("idle socket closed with %d, want 1008", code)
		}
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if timedOut.Load() != 1 {
			t.Fatalf("deadline fired %d times, want 1", timedOut.Load())
		}
		select {
		case err := <-fastH.closed:
			t.Fatalf("authenticated socket closed: %v", err)
		case err := <-decidingH.closed:
			t.Fatalf("socket authenticated past the deadline closed: %v", err)
		default:
		}
		if ep.Unauthenticated() != 0 {
			t.Fatalf("%d unauthenticated slots held", ep.Unauthenticated())
		}
		_ = idle
		sockets.Shutdown(1001, "done")
		<-fastH.closed
		<-decidingH.closed
		sockets.Wait()
	})
}

// slowHello authenticates on "hello" at once and on "slow hello" after 15 s
// of deciding (a handshake that probes an incumbent, say).
type slowHello struct{}

type slowSession struct{ c *Conn }

func (slowHello) Open(c *Conn) Session { return slowSession{c} }
func (s slowSession) Message(m *gws.Message) {
	switch string(m.Bytes()) {
	case "slow hello":
		time.Sleep(15 * time.Second)
		fallthrough
	case "hello":
		s.c.Authenticated()
	}
}
func (slowSession) Closed(error) {}
