package rawio

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// countingConn is a TCP connection that counts the read deadlines its
// descriptor is given (and may report each), under raw I/O like any
// other: it keeps SyscallConn.
type countingConn struct {
	*net.TCPConn
	sets  atomic.Int64 // read deadlines
	wsets atomic.Int64 // write deadlines
	onSet func(time.Time)
}

func (c *countingConn) SetWriteDeadline(t time.Time) error {
	c.wsets.Add(1)
	return c.TCPConn.SetWriteDeadline(t)
}

func (c *countingConn) SetReadDeadline(t time.Time) error {
	c.sets.Add(1)
	if c.onSet != nil {
		c.onSet(t)
	}
	return c.TCPConn.SetReadDeadline(t)
}

func (c *countingConn) SetDeadline(t time.Time) error {
	c.sets.Add(1)
	c.wsets.Add(1)
	return c.TCPConn.SetDeadline(t)
}

// countedPair is tcpPair with the server side's descriptor deadlines
// counted.
func countedPair(t *testing.T, onSet func(time.Time)) (*rawConn, *countingConn, *net.TCPConn) {
	t.Helper()
	sc, cl := loopbackPair(t)
	cc := &countingConn{TCPConn: sc, onSet: onSet}
	return wrapped(t, cc, cl), cc, cl
}

// waitedPair is countedPair after a first Read waited under a read
// deadline d from now and got its byte: the descriptor has that deadline
// (cc counted it, once).
func waitedPair(t *testing.T, d time.Duration) (*rawConn, *countingConn, *net.TCPConn) {
	t.Helper()
	parked := make(chan struct{}, 1)
	rc, cc, cl := countedPair(t, func(time.Time) {
		select {
		case parked <- struct{}{}:
		default:
		}
	})
	rc.SetReadDeadline(time.Now().Add(d))
	got := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(rc, make([]byte, 1))
		got <- err
	}()
	<-parked // the Read gave the descriptor its deadline: it is about to wait
	cl.Write([]byte("a"))
	if err := <-got; err != nil {
		t.Fatalf("first read = %v", err)
	}
	return rc, cc, cl
}

// countingListener gives every connection it accepts raw I/O over a
// countingConn.
type countingListener struct {
	net.Listener
	conns chan *countingConn
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := &countingConn{TCPConn: c.(*net.TCPConn)}
	l.conns <- cc
	return wrap(cc), nil
}

// net/http sets a kept-alive connection's read deadline six times a
// request (the header deadline twice and its clearing, the background
// read's start and abort, the idle deadline) and clears its write deadline
// once; each was a change of the runtime's deadline timer, most with a
// clock read. A wait needs one only when the descriptor's deadline would
// end it too late, or has passed. The idle deadline of the connection's
// first wait comes before every later one, so with a handler that answers
// at once no timer changes after that first wait. A handler that waits (a
// bridge's call waits for the page) lets net/http's background read wait
// meanwhile, under that same deadline; its abort, and the next wait after
// it, need one each. No write deadline reaches the descriptor. (At the
// hub's one P; with more, the background read of a handler that answers
// at once may start waiting before its abort, and then it costs the same
// two.)
func TestHTTPKeepAliveDeadlinesReachTheDescriptorOnlyToWait(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler func()
		perReq  int64
	}{
		{"handler answers at once", func() {}, 0},
		// Gosched at one P runs the background read until it waits.
		{"handler waits", runtime.Gosched, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			cl := &countingListener{Listener: ln, conns: make(chan *countingConn, 4)}
			srv := &http.Server{
				Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					tc.handler()
					io.WriteString(w, "ok")
				}),
				ReadHeaderTimeout: 5 * time.Second,
				IdleTimeout:       2 * time.Minute,
			}
			done := make(chan struct{})
			go func() { srv.Serve(cl); close(done) }()
			t.Cleanup(func() { srv.Close(); <-done })

			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			const requests = 200
			for range requests {
				resp, err := client.Get("http://" + ln.Addr().String() + "/")
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "ok" {
					t.Fatalf("answer %q", b)
				}
			}
			cc := <-cl.conns
			if len(cl.conns) != 0 {
				t.Fatal("the client did not keep its connection alive")
			}
			// A little room for the first wait, and for a handler the
			// scheduler preempted before net/http aborted its background
			// read.
			if sets := cc.sets.Load(); sets > tc.perReq*requests+requests/4 {
				t.Fatalf("%d read deadlines reached the descriptor for %d requests; want about %d a request", sets, requests, tc.perReq)
			}
			// net/http clears the write deadline after every request; the
			// descriptor never had one.
			if wsets := cc.wsets.Load(); wsets != 0 {
				t.Fatalf("%d write deadlines reached the descriptor for %d requests; want none", wsets, requests)
			}
		})
	}
}

// A read deadline is recorded until a Read needs it, and applies exactly
// as the standard library's would, case by case.
func TestReadDeadlineSemantics(t *testing.T) {
	t.Run("a Read past its deadline fails and consumes nothing", func(t *testing.T) {
		rc, cc, cl := countedPair(t, nil)
		cl.Write([]byte("abc"))
		rc.SetReadDeadline(time.Unix(1, 0)) // net/http's abort of its background read
		_, err := rc.Read(make([]byte, 8))
		var ne net.Error
		if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("read past the deadline = %v; want a timeout", err)
		}
		if cc.sets.Load() != 0 {
			t.Fatal("a deadline that no Read waited under reached the descriptor")
		}
		rc.SetReadDeadline(time.Time{})
		got, err := io.ReadAll(io.LimitReader(rc, 3))
		if err != nil || string(got) != "abc" {
			t.Fatalf("after clearing the deadline read %q, %v; want the bytes that were waiting", got, err)
		}
	})
	t.Run("a deadline set while a Read waits ends it", func(t *testing.T) {
		rc, _, _ := countedPair(t, nil)
		done := make(chan error, 1)
		go func() {
			_, err := rc.Read(make([]byte, 1))
			done <- err
		}()
		time.Sleep(10 * time.Millisecond) // let it park (either way it must end)
		rc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read = %v; want a timeout", err)
		}
	})
	t.Run("a deadline cleared while a Read waits lets it wait on", func(t *testing.T) {
		parked := make(chan struct{}, 1)
		rc2, _, cl2 := countedPair(t, func(time.Time) {
			select {
			case parked <- struct{}{}:
			default:
			}
		})
		rc2.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		done := make(chan error, 1)
		go func() {
			_, err := io.ReadFull(rc2, make([]byte, 1))
			done <- err
		}()
		<-parked // the Read gave the descriptor its deadline: it is about to wait
		rc2.SetReadDeadline(time.Time{})
		time.Sleep(600 * time.Millisecond) // past the deadline it had
		cl2.Write([]byte("x"))
		if err := <-done; err != nil {
			t.Fatalf("read = %v; want the byte", err)
		}
	})
	t.Run("a deadline replaced while no Read waits does not fail a later Read", func(t *testing.T) {
		rc, _, cl := waitedPair(t, 300*time.Millisecond)
		rc.SetReadDeadline(time.Time{})    // recorded only: the descriptor keeps the old one
		time.Sleep(400 * time.Millisecond) // which passes while no Read waits
		cl.Write([]byte("b"))
		b := make([]byte, 1)
		if _, err := io.ReadFull(rc, b); err != nil || b[0] != 'b' {
			t.Fatalf("read after the old deadline passed = %q, %v; want \"b\"", b, err)
		}
	})
	t.Run("a Read waits under the descriptor's earlier deadline, then on past it", func(t *testing.T) {
		rc, cc, cl := waitedPair(t, 300*time.Millisecond)
		got := make(chan error, 1)
		rc.SetReadDeadline(time.Time{}) // net/http's background read
		go func() {
			_, err := io.ReadFull(rc, make([]byte, 1))
			got <- err
		}()
		time.Sleep(100 * time.Millisecond) // the Read waits, under the 300 ms deadline
		if n := cc.sets.Load(); n != 1 {
			t.Fatalf("%d read deadlines reached the descriptor; want only the first: the second Read waits under it", n)
		}
		time.Sleep(400 * time.Millisecond) // past it: the Read must wait on
		cl.Write([]byte("b"))
		if err := <-got; err != nil {
			t.Fatalf("read after the descriptor's deadline passed = %v; want the byte", err)
		}
	})
	t.Run("SetDeadline bounds reads and writes", func(t *testing.T) {
		rc, _, _ := countedPair(t, nil)
		rc.SetDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := rc.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read = %v; want a timeout", err)
		}
		if _, err := rc.Write(make([]byte, 64<<20)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("write = %v; want a timeout", err)
		}
	})
}

// The runtime's poller is edge-triggered, and every Read starts by
// forgetting the readiness it recorded (internal/poll's prepareRead), so a
// Read must try the socket before it waits: bytes that arrived after the
// last read, once the poller has seen them while no Read waited, would
// otherwise wait for the next edge. rawio reads first; this pins it.
func TestReadFindsBytesThatArrivedBetweenReads(t *testing.T) {
	for range 3 {
		rc, _, cl := countedPair(t, nil)
		cl.Write([]byte("x"))
		buf := make([]byte, 64)
		if n, err := rc.Read(buf); err != nil || n != 1 { // a short read: the socket is drained
			t.Fatalf("read = %d, %v", n, err)
		}
		cl.Write([]byte("y"))
		time.Sleep(20 * time.Millisecond) // the idle P polls: the readiness is recorded with no Read waiting
		rc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := rc.Read(buf); err != nil || string(buf[:n]) != "y" {
			t.Fatalf("read = %q, %v; want \"y\" at once", buf[:n], err)
		}
	}
}
