package hub

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// evictableNow counts, by rank, the connections l could evict now.
func (l *connLimit) evictableNow() map[string]int {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	n := map[string]int{}
	for c := range l.conns {
		if r, _ := c.rank(now); r != rankKeep {
			n[rankNames[r]]++
		}
	}
	return n
}

// startLimited serves h under the connection limit of ctx on a loopback
// port, as ServeHTTP does, and returns the limit for inspection.
func startLimited(t *testing.T, ctx context.Context, h http.Handler) (string, *connLimit) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, l := newServer(ctx, ln, h, slog.New(slog.DiscardHandler))
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(l) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String(), l
}

func dialTCP(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// answered reads one response from c within wait.
func answered(c net.Conn, br *bufio.Reader, wait time.Duration) (int, error) {
	c.SetReadDeadline(time.Now().Add(wait))
	defer c.SetReadDeadline(time.Time{})
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// cut reports whether the server closed c (without an answer).
func cut(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := c.Read(make([]byte, 1))
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// A full listener makes room by closing a connection the server is
// waiting on, in this order: the one that sent part of a header and
// stopped, the one that has sent nothing (past its grace), the one idle
// between requests, the one whose body is arriving (past its grace).
// Connections being served are never closed: with only those left, a
// newcomer waits.
func TestConnLimitEvictionOrder(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hold":
			entered <- struct{}{}
			<-release
		case "/body":
			io.ReadAll(r.Body)
		}
		w.Write([]byte("ok"))
	})
	addr, l := startLimited(t, WithMaxConns(context.Background(), 4), h)
	waitEvictable := func(want map[string]int) {
		t.Helper()
		waitCond(t, fmt.Sprint("evictable ", want), func() bool { return fmt.Sprint(l.evictableNow()) == fmt.Sprint(want) })
	}

	idle := dialTCP(t, addr)
	fmt.Fprintf(idle, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	if got, err := answered(idle, bufio.NewReader(idle), 10*time.Second); err != nil || got != 200 {
		t.Fatalf("first request: %d, %v", got, err)
	}
	header := dialTCP(t, addr)
	fmt.Fprintf(header, "GET / HTTP/1.1\r\nHost: %s\r\nX-Slow: a", addr)
	silent := dialTCP(t, addr)
	body := dialTCP(t, addr)
	fmt.Fprintf(body, "POST /body HTTP/1.1\r\nHost: %s\r\nContent-Length: 10\r\n\r\n{", addr)
	waitEvictable(map[string]int{"stalled header": 1, "silent": 1, "idle": 1, "slow body": 1})

	for i, victim := range []net.Conn{header, silent, idle, body} {
		c := dialTCP(t, addr)
		fmt.Fprintf(c, "GET /hold HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		<-entered
		if !cut(victim) {
			t.Fatalf("newcomer %d: the expected connection was not closed", i)
		}
	}
	last := dialTCP(t, addr)
	br := bufio.NewReader(last)
	fmt.Fprintf(last, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	if got, err := answered(last, br, 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a request was answered while every slot was being served (%d, %v)", got, err)
	}
	release <- struct{}{} // one handler returns; its connection goes idle and can go
	if got, err := answered(last, br, 10*time.Second); err != nil || got != 200 {
		t.Fatalf("after a handler returned: %d, %v", got, err)
	}
}

// pipeListener hands out net.Pipe connections, so that a server can run
// inside a synctest bubble (real sockets cannot) and its deadlines follow
// the bubble's clock.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn, 64), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial queues a connection for Accept (as the kernel's accept queue
// would) and returns the client's end.
func (l *pipeListener) dial() net.Conn {
	srv, cli := net.Pipe()
	l.conns <- srv
	return cli
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "127.0.0.1:80" }

// serveBubble runs ServeHTTP with ctx's options over a pipe listener
// until the bubble's test ends.
func serveBubble(t *testing.T, ctx context.Context, h http.Handler) *pipeListener {
	ln := newPipeListener()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ServeHTTP(ctx, ln, h, nil, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return ln
}

// closedAt returns a channel that receives the bubble's time when the
// server closes c (reading and discarding whatever it sends).
func closedAt(c net.Conn) <-chan time.Time {
	at := make(chan time.Time, 1)
	go func() {
		io.Copy(io.Discard, c)
		at <- time.Now()
	}()
	return at
}

// trickle writes b a byte a second, stopping early if the peer is gone;
// it returns how many bytes went out.
func trickle(c net.Conn, b string) int {
	for i := range len(b) {
		time.Sleep(time.Second)
		if _, err := c.Write([]byte{b[i]}); err != nil {
			return i
		}
	}
	return len(b)
}

// A request header has 5 s to arrive, counted from the accept for a
// connection's first request and, for a later one on a keep-alive
// connection, from its first four bytes (net/http waits for those before
// it arms the deadline): a byte arriving does not extend it.
func TestHeaderDeadlineIsAbsolute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := serveBubble(t, context.Background(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("ok"))
		}))
		start := time.Now()
		c := ln.dial()
		defer c.Close()
		gone := closedAt(c)
		sent := trickle(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\nX-Slow: aaaaaaaaaaaaaaaa")
		if d := (<-gone).Sub(start); d != 5*time.Second {
			t.Fatalf("a trickled first header was cut after %v (%d bytes sent), want 5s", d, sent)
		}

		c2 := ln.dial()
		defer c2.Close()
		go c2.Write([]byte("GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n"))
		br := bufio.NewReader(c2)
		if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
			t.Fatalf("first request: %v %v", resp, err)
		} else {
			io.Copy(io.Discard, resp.Body)
		}
		time.Sleep(time.Minute) // idle between requests: no header deadline
		gone2 := make(chan time.Time, 1)
		go func() { io.Copy(io.Discard, br); gone2 <- time.Now() }()
		trickle(c2, "GET ")
		fourth := time.Now()
		trickle(c2, "/ HTTP/1.1\r\nHost: 127.0.0.1:80\r\nX-Slow: aaaaaaaaaaaaaaaa")
		if d := (<-gone2).Sub(fourth); d != 5*time.Second {
			t.Fatalf("a trickled keep-alive header was cut %v after its fourth byte, want 5s", d)
		}
	})
}

// A connection that has sent nothing yet keeps its slot for a moment (its
// client may not have written yet), then a newcomer takes it; one that
// sent part of a header and stopped gives it up at once.
func TestConnLimitGraceForSilentConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := serveBubble(t, WithMaxConns(context.Background(), 1), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("ok"))
		}))
		for _, tc := range []struct {
			name  string
			sends string
			wait  time.Duration
		}{
			{"silent", "", evictGrace},
			{"part of a header", "GET / HTTP/1.1\r\n", 0},
		} {
			holder := ln.dial()
			gone := closedAt(holder)
			if tc.sends != "" {
				holder.Write([]byte(tc.sends))
			}
			synctest.Wait()
			start := time.Now()
			c := ln.dial()
			go c.Write([]byte("GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\nConnection: close\r\n\r\n"))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("%s: newcomer: %v %v", tc.name, resp, err)
			}
			if d := time.Since(start); d != tc.wait {
				t.Errorf("%s: the newcomer was answered after %v, want %v", tc.name, d, tc.wait)
			}
			if at := <-gone; at.Sub(start) != tc.wait {
				t.Errorf("%s: the holder was closed after %v, want %v", tc.name, at.Sub(start), tc.wait)
			}
			c.Close()
			holder.Close()
			synctest.Wait() // the newcomer's slot is free again
		}
	})
}

// The header scan over a connection's reads, however the bytes are split,
// finds the end of a header exactly when the bytes hold a blank line.
func FuzzScanHeader(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), uint8(7))
	f.Add([]byte("GET / HTTP/1.1\nHost: x\n\n"), uint8(0))
	f.Add([]byte("GET / HTTP/1.1\r\nX-Slow: aaaa"), uint8(3))
	f.Add([]byte("\r\n\r"), uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, split uint8) {
		k := int(split) % (len(b) + 1)
		c := &limitedConn{}
		for _, part := range [][]byte{b[:k], b[k:]} {
			if !c.headerIn.Load() {
				c.scanHeader(part)
			}
		}
		want := bytes.Contains(b, []byte("\r\n\r\n")) || bytes.Contains(b, []byte("\n\n"))
		if c.headerIn.Load() != want {
			t.Fatalf("%q split at %d: header in %v, want %v", b, k, c.headerIn.Load(), want)
		}
	})
}

func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
