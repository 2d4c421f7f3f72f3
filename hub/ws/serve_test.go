package ws

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/lxzan/gws"
)

// echoHandler is a Handler whose sessions echo text and count closes.
type echoHandler struct {
	opened atomic.Int32
	mu     sync.Mutex
	closed []error
	conns  chan *Conn
}

type echoSession struct {
	h *echoHandler
	c *Conn
}

func (h *echoHandler) Open(c *Conn) Session {
	h.opened.Add(1)
	if h.conns != nil {
		h.conns <- c
	}
	return &echoSession{h: h, c: c}
}

// Message echoes; "hello" is the credential these tests' protocol accepts.
func (s *echoSession) Message(m *gws.Message) {
	if string(m.Bytes()) == "hello" {
		s.c.Authenticated()
	}
	s.c.WriteFrame(m.Opcode, m.Bytes(), 0)
}

func (s *echoSession) Closed(err error) {
	s.h.mu.Lock()
	s.h.closed = append(s.h.closed, err)
	s.h.mu.Unlock()
}

func (h *echoHandler) closes() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.closed)
}

type clientHandler struct {
	gws.BuiltinEventHandler
	closed chan error
	msgs   chan string
	pings  atomic.Int32
	noPong bool
}

func newClientHandler() *clientHandler {
	return &clientHandler{closed: make(chan error, 1), msgs: make(chan string, 16)}
}

func (h *clientHandler) OnClose(_ *gws.Conn, err error) { h.closed <- err }
func (h *clientHandler) OnMessage(_ *gws.Conn, m *gws.Message) {
	h.msgs <- m.Data.String()
	m.Close()
}
func (h *clientHandler) OnPing(c *gws.Conn, b []byte) {
	h.pings.Add(1)
	if !h.noPong {
		c.WritePong(b)
	}
}

type wsServer struct {
	port    int
	sockets *Sockets
	ep      *Endpoint
	cancel  context.CancelFunc
	done    chan error
}

func startWS(t *testing.T, h Handler, o Options) *wsServer {
	t.Helper()
	ln, port, err := hub.Listen([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	s := &wsServer{port: port, sockets: &Sockets{}, done: make(chan error, 1)}
	s.ep = s.sockets.Endpoint(h, o)
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		s.done <- hub.ServeHTTP(ctx, ln, http.HandlerFunc(s.ep.Serve), s.sockets, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	t.Cleanup(func() { cancel(); <-s.done })
	return s
}

func (s *wsServer) dial(t *testing.T, h *clientHandler) *gws.Conn {
	t.Helper()
	c, _, err := gws.NewClient(h, &gws.ClientOption{Addr: "ws://127.0.0.1:" + itoa(s.port) + "/"})
	if err != nil {
		t.Fatal(err)
	}
	go c.ReadLoop()
	return c
}

func waitClose(t *testing.T, h *clientHandler) error {
	t.Helper()
	select {
	case err := <-h.closed:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("the client never saw a close")
		return nil
	}
}

func closeCode(err error) uint16 {
	var ce *gws.CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return 0
}

// hub.ServeHTTP does what http.Server.Shutdown does not: WebSocket
// connections are closed with 1001, and it returns only after each one's
// Closed ran; a socket that arrives afterwards is refused with 1001.
func TestServeHTTPClosesSocketsAndWaits(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 1)}
	s := startWS(t, h, Options{})
	ch := newClientHandler()
	c := s.dial(t, ch)
	<-h.conns
	c.WriteString("hi")
	if got := <-ch.msgs; got != "hi" {
		t.Fatalf("echo = %q", got)
	}
	if s.sockets.Len() != 1 || s.ep.Len() != 1 {
		t.Fatalf("tracked %d / %d sockets, want 1", s.sockets.Len(), s.ep.Len())
	}
	s.cancel()
	if code := closeCode(waitClose(t, ch)); code != 1001 {
		t.Fatalf("client closed with %d, want 1001", code)
	}
	if err := <-s.done; err != nil {
		t.Fatalf("ServeHTTP = %v", err)
	}
	s.done <- nil // for the cleanup
	if h.closes() != 1 {
		t.Fatalf("Closed ran %d times before hub.ServeHTTP returned, want 1", h.closes())
	}
	if s.sockets.Len() != 0 || s.ep.Len() != 0 {
		t.Fatalf("still tracking %d / %d sockets", s.sockets.Len(), s.ep.Len())
	}
}

// CloseAll (a hot reload) drops every socket and keeps accepting new ones.
func TestSocketsCloseAllKeepsServing(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 2)}
	s := startWS(t, h, Options{})
	ch := newClientHandler()
	s.dial(t, ch)
	<-h.conns
	if n := s.sockets.CloseAll(1012, "service restart"); n != 1 {
		t.Fatalf("CloseAll closed %d", n)
	}
	if code := closeCode(waitClose(t, ch)); code != 1012 {
		t.Fatalf("close code %d, want 1012", code)
	}
	ch2 := newClientHandler()
	c2 := s.dial(t, ch2)
	<-h.conns
	c2.WriteString("again")
	if got := <-ch2.msgs; got != "again" {
		t.Fatalf("echo after CloseAll = %q", got)
	}
}

// Invalid UTF-8 in a text frame closes the socket on every endpoint.
func TestInvalidUTF8TextIsRefused(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 1)}
	s := startWS(t, h, Options{})
	ch := newClientHandler()
	c := s.dial(t, ch)
	<-h.conns
	c.WriteMessage(gws.OpcodeText, []byte{0xff, 0xfe})
	if code := closeCode(waitClose(t, ch)); code != 1007 {
		t.Fatalf("close code %d, want 1007 (invalid payload data)", code)
	}
}

// A peer that never answers is dropped after DeadAfter, through the same
// Closed as a close; Reachable tells a live peer from a silent one.
func TestHeartbeatAndReachable(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 2)}
	s := startWS(t, h, Options{Heartbeat: HeartbeatConfig{Interval: 50 * time.Millisecond, DeadAfter: time.Second}})

	live := newClientHandler()
	s.dial(t, live)
	lc := <-h.conns
	if !lc.Reachable(2 * time.Second) {
		t.Fatal("a live peer is unreachable")
	}

	silent := newClientHandler()
	silent.noPong = true
	s.dial(t, silent)
	sc := <-h.conns
	if sc.Reachable(50 * time.Millisecond) {
		t.Fatal("a silent peer is reachable")
	}
	waitClose(t, silent)
	for deadline := time.Now().Add(5 * time.Second); h.closes() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the silent peer's Closed never ran")
		}
	}
	if !sc.Closed() || lc.Closed() {
		t.Fatalf("closed: silent %v, live %v", sc.Closed(), lc.Closed())
	}
	if silent.pings.Load() == 0 {
		t.Fatal("the heartbeat never pinged")
	}
}

func itoa(n int) string { return hub.FormatPorts([]int{n}) }
