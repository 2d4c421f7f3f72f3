package ws

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/rawio"
	"github.com/lxzan/gws"
)

// A socket served through hub.ServeHTTP (its listener wraps every
// connection) reads and writes with raw calls on Linux: without them each
// frame's first system call wakes the runtime's monitor thread.
func TestServedSocketUsesRawIO(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 1)}
	s := startWS(t, h, Options{})
	ch := newClientHandler()
	cl := s.dial(t, ch)
	defer cl.NetConn().Close()
	c := <-h.conns
	if _, ok := rawio.Bounder(c.pre.Conn); !ok {
		t.Fatalf("the socket's connection (%T) is not raw I/O", c.pre.Conn)
	}
	if err := cl.WriteString("hello"); err != nil {
		t.Fatal(err)
	}
	if got := nextMsg(t, ch); got != "hello" {
		t.Fatalf("echo = %q", got)
	}
}

// countingListener wraps each accepted TCP connection so that a test can
// count the write deadlines set on it (through hub's own wrapper).
type countingListener struct {
	net.Listener
	deadlines *atomic.Int64
}

type countingConn struct {
	*net.TCPConn
	deadlines *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c.(*net.TCPConn), l.deadlines}, nil
}

func (c countingConn) SetWriteDeadline(t time.Time) error {
	c.deadlines.Add(1)
	return c.TCPConn.SetWriteDeadline(t)
}

func (c countingConn) SetDeadline(t time.Time) error {
	c.deadlines.Add(1)
	return c.TCPConn.SetDeadline(t)
}

// A frame that finds room in the socket sets no write deadline: the bound
// starts only when a write has to wait. Before, every frame set one and
// cleared it (two timer updates in the runtime per frame).
func TestFramesSetNoWriteDeadline(t *testing.T) {
	ln, port, err := hub.Listen([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	var deadlines atomic.Int64
	h := &echoHandler{}
	s := &wsServer{port: port, sockets: &Sockets{}, done: make(chan error, 1)}
	s.ep = s.sockets.Endpoint(h, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		s.done <- hub.ServeHTTP(ctx, countingListener{ln, &deadlines}, http.HandlerFunc(s.ep.Serve), s.sockets, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() { cancel(); <-s.done })
	ch := newClientHandler()
	cl := s.dial(t, ch)
	defer cl.NetConn().Close()
	cl.WriteString("hello")
	nextMsg(t, ch)
	before := deadlines.Load()
	const frames = 50
	for range frames {
		cl.WriteString("frame")
		if got := nextMsg(t, ch); got != "frame" {
			t.Fatalf("echo = %q", got)
		}
	}
	if n := deadlines.Load() - before; n != 0 {
		t.Fatalf("%d write deadlines set for %d frames, want 0", n, frames)
	}
}

// A peer that stops reading still cannot wedge a writer: once the socket
// is full, a frame's write fails when its timeout has passed.
func TestWriteFrameBoundedWhenThePeerStopsReading(t *testing.T) {
	h := &echoHandler{conns: make(chan *Conn, 1)}
	s := startWS(t, h, Options{})
	cl, _, err := gws.NewClient(newClientHandler(), &gws.ClientOption{Addr: "ws://127.0.0.1:" + itoa(s.port) + "/"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.NetConn().Close() // never reads: no ReadLoop
	c := <-h.conns
	big := make([]byte, 1<<20)
	for i := 0; ; i++ {
		err := c.WriteFrame(gws.OpcodeBinary, big, 50*time.Millisecond)
		if err == nil {
			if i > 1000 {
				t.Fatal("1 GiB written to a peer that does not read")
			}
			continue
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("write to a stalled peer = %v, want a timeout", err)
		}
		break
	}
}

// gatedEcho replies to every message with the message (Reply), and waits
// for gate before it replies to "3".
type gatedEcho struct {
	conns chan *Conn
	gate  chan struct{}
}

type gatedSession struct {
	c    *Conn
	gate chan struct{}
}

func (h gatedEcho) Open(c *Conn) Session {
	h.conns <- c
	return gatedSession{c, h.gate}
}

func (s gatedSession) Message(m *gws.Message) {
	if string(m.Bytes()) == "hello" {
		s.c.Authenticated()
	}
	if string(m.Bytes()) == "3" {
		<-s.gate
	}
	s.c.Reply(m.Bytes())
}

func (gatedSession) Closed(error) {}

// Replies to frames a peer sent back to back stay held while the reader
// still has frames to handle, and then leave together, in order. A write
// that is not a reply (another goroutine's) is not held: it goes at once,
// after what is held.
func TestRepliesToPipelinedFramesLeaveTogether(t *testing.T) {
	h := gatedEcho{conns: make(chan *Conn, 1), gate: make(chan struct{})}
	s := startWS(t, h, Options{})
	var open sync.Once
	release := func() { open.Do(func() { close(h.gate) }) }
	t.Cleanup(release) // before the server's cleanup, which waits for the session
	ch := newClientHandler()
	cl := s.dial(t, ch)
	defer cl.NetConn().Close()
	c := <-h.conns
	var frames []byte
	for _, m := range []string{"1", "2", "3"} {
		frames = append(frames, clientFrame(gws.OpcodeText, []byte(m))...)
	}
	if _, err := cl.NetConn().Write(frames); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-ch.msgs:
		t.Fatalf("got %q while the reader was still handling the frames sent with it", m)
	case <-time.After(300 * time.Millisecond):
	}
	if err := c.WriteText([]byte("push")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1", "2", "push"} {
		if got := nextMsg(t, ch); got != want {
			t.Fatalf("while the reader waits: got %q, want %q", got, want)
		}
	}
	release()
	if got := nextMsg(t, ch); got != "3" {
		t.Fatalf("got %q, want %q", got, "3")
	}
}
