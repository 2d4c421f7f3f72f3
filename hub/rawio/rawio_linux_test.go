package rawio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/internal/race"
)

// tcpPair is a connected loopback pair: the server side wrapped in raw
// I/O, the client side a plain TCP connection.
func tcpPair(t *testing.T) (*rawConn, *net.TCPConn) {
	t.Helper()
	sc, cl := loopbackPair(t)
	return wrapped(t, sc, cl), cl
}

// loopbackPair is a connected loopback pair of plain TCP connections: the
// accepted side first.
func loopbackPair(t *testing.T) (server, client *net.TCPConn) {
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
		cl.Close()
		t.Fatal("accept failed")
	}
	return sc.(*net.TCPConn), cl.(*net.TCPConn)
}

// wrapped gives c raw I/O and closes it and peer when the test ends.
func wrapped(t *testing.T, c net.Conn, peer net.Conn) *rawConn {
	t.Helper()
	rc, ok := wrap(c).(*rawConn)
	if !ok {
		t.Fatal("a TCP connection was not given raw I/O")
	}
	t.Cleanup(func() { rc.Close(); peer.Close() })
	return rc
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
		rc.BoundWrites(50 * time.Millisecond)
		big := make([]byte, 64<<20)
		n, err := rc.Write(big)
		if !errors.Is(err, os.ErrDeadlineExceeded) || n >= len(big) {
			t.Fatalf("bounded write to a stalled peer = %d, %v; want a timeout before the end", n, err)
		}
	})
	t.Run("an explicit write deadline wins over the bound", func(t *testing.T) {
		rc, _ := tcpPair(t)
		rc.BoundWrites(time.Hour)
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
	if got := Wrap(a); got != a {
		t.Fatalf("Wrap(net.Pipe) = %T", got)
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
	if !race.Enabled && allocs != 0 {
		t.Fatalf("%v allocations per round trip, want 0", allocs)
	}
}
