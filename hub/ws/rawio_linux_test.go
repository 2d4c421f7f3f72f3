package ws

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
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
	if _, ok := c.pre.Conn.(*rawConn); !ok {
		t.Fatalf("the socket's connection is a %T, not raw I/O", c.pre.Conn)
	}
	if err := cl.WriteString("hello"); err != nil {
		t.Fatal(err)
	}
	if got := nextMsg(t, ch); got != "hello" {
		t.Fatalf("echo = %q", got)
	}
}

// tcpPair is a connected loopback pair: the server side wrapped in raw
// I/O, the client side a plain TCP connection.
func tcpPair(t *testing.T) (*rawConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc := <-accepted
	if sc == nil {
		t.Fatal("accept failed")
	}
	rc, ok := newRawConn(sc).(*rawConn)
	if !ok {
		t.Fatal("a TCP connection was not given raw I/O")
	}
	t.Cleanup(func() { rc.Close(); cl.Close() })
	return rc, cl.(*net.TCPConn)
}

// Raw I/O keeps net.Conn's contract, case by case as a *net.TCPConn
// behaves.
func TestRawConnBehavesLikeTCPConn(t *testing.T) {
	t.Run("echo", func(t *testing.T) {
		rc, cl := tcpPair(t)
		cl.Write([]byte("ping"))
		buf := make([]byte, 16)
		n, err := rc.Read(buf)
		if err != nil || string(buf[:n]) != "ping" {
			t.Fatalf("read = %q, %v", buf[:n], err)
		}
		if n, err := rc.Write([]byte("pong")); n != 4 || err != nil {
			t.Fatalf("write = %d, %v", n, err)
		}
		if _, err := io.ReadFull(cl, buf[:4]); err != nil || string(buf[:4]) != "pong" {
			t.Fatalf("peer read %q, %v", buf[:4], err)
		}
	})
	t.Run("empty read and write", func(t *testing.T) {
		rc, _ := tcpPair(t)
		if n, err := rc.Read(nil); n != 0 || err != nil {
			t.Fatalf("Read(nil) = %d, %v", n, err)
		}
		if n, err := rc.Write(nil); n != 0 || err != nil {
			t.Fatalf("Write(nil) = %d, %v", n, err)
		}
	})
	t.Run("end of stream is io.EOF", func(t *testing.T) {
		rc, cl := tcpPair(t)
		cl.Write([]byte("last"))
		cl.Close()
		got, err := io.ReadAll(rc)
		if err != nil || string(got) != "last" {
			t.Fatalf("ReadAll = %q, %v", got, err)
		}
		if n, err := rc.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("read after the end = %d, %v; want io.EOF", n, err)
		}
	})
	t.Run("read deadline", func(t *testing.T) {
		rc, _ := tcpPair(t)
		rc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err := rc.Read(make([]byte, 1))
		var ne net.Error
		if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("read past the deadline = %v; want a timeout", err)
		}
	})
	t.Run("close unblocks a parked read", func(t *testing.T) {
		rc, _ := tcpPair(t)
		done := make(chan error, 1)
		go func() {
			_, err := rc.Read(make([]byte, 1))
			done <- err
		}()
		time.Sleep(10 * time.Millisecond) // let it park (either way it must end)
		rc.Close()
		if err := <-done; !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read on a closed connection = %v; want net.ErrClosed", err)
		}
	})
	t.Run("a large write waits for room and arrives whole", func(t *testing.T) {
		rc, cl := tcpPair(t)
		want := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB: more than the socket buffers
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(io.LimitReader(cl, int64(len(want))))
			got <- b
		}()
		if n, err := rc.Write(want); n != len(want) || err != nil {
			t.Fatalf("write = %d, %v", n, err)
		}
		if !bytes.Equal(<-got, want) {
			t.Fatal("the peer read other bytes than were written")
		}
	})
	t.Run("write deadline with a peer that does not read", func(t *testing.T) {
		rc, _ := tcpPair(t)
		rc.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		big := make([]byte, 64<<20)
		n, err := rc.Write(big)
		if !errors.Is(err, os.ErrDeadlineExceeded) || n >= len(big) {
			t.Fatalf("write to a stalled peer = %d, %v; want a timeout before the end", n, err)
		}
	})
	t.Run("a write's own bound once it has to wait", func(t *testing.T) {
		rc, _ := tcpPair(t)
		rc.boundWrites(50 * time.Millisecond)
		big := make([]byte, 64<<20)
		n, err := rc.Write(big)
		if !errors.Is(err, os.ErrDeadlineExceeded) || n >= len(big) {
			t.Fatalf("bounded write to a stalled peer = %d, %v; want a timeout before the end", n, err)
		}
	})
	t.Run("an explicit write deadline wins over the bound", func(t *testing.T) {
		rc, _ := tcpPair(t)
		rc.boundWrites(time.Hour)
		rc.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		n, err := rc.Write(make([]byte, 64<<20))
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("write past an explicit deadline = %d, %v; want a timeout", n, err)
		}
	})
	t.Run("write to a reset peer fails", func(t *testing.T) {
		rc, cl := tcpPair(t)
		cl.SetLinger(0)
		cl.Close() // RST
		var err error
		for range 100 {
			if _, err = rc.Write([]byte("x")); err != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if err == nil {
			t.Fatal("writes to a reset connection kept succeeding")
		}
	})
	t.Run("concurrent writes do not interleave", func(t *testing.T) {
		rc, cl := tcpPair(t)
		const writers, size = 4, 256 << 10
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(io.LimitReader(cl, writers*size))
			got <- b
		}()
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := rc.Write(bytes.Repeat([]byte{byte('a' + i)}, size)); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		b := <-got
		if len(b) != writers*size {
			t.Fatalf("read %d bytes, want %d", len(b), writers*size)
		}
		for off := 0; off < len(b); off += size {
			if bytes.Count(b[off:off+size], b[off:off+1]) != size {
				t.Fatalf("the block at %d mixes writers", off)
			}
		}
	})
}

// A connection whose descriptor cannot be had (a net.Pipe in a synctest
// bubble) is served as it is.
func TestRawIOLeavesOtherConnsAlone(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := rawIO(a); got != a {
		t.Fatalf("rawIO(net.Pipe) = %T", got)
	}
}

// Reading and writing a frame allocates nothing per call.
func TestRawConnAllocatesNothing(t *testing.T) {
	rc, cl := tcpPair(t)
	msg := []byte("0123456789")
	buf := make([]byte, len(msg))
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := rc.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(cl, buf); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(rc, buf); err != nil {
			t.Fatal(err)
		}
	})
	if !raceEnabled && allocs != 0 {
		t.Fatalf("%v allocations per round trip, want 0", allocs)
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
