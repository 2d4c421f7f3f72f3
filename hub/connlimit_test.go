package hub_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// serveWith runs h under hub.ServeHTTP with ctx's options until the test
// ends; stop cancels it early and returns what ServeHTTP returned.
func serveWith(t *testing.T, ctx context.Context, h http.Handler) (addr string, stop func() error) {
	t.Helper()
	ln, port, err := hub.Listen([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- hub.ServeHTTP(ctx, ln, h, nil, slog.New(slog.DiscardHandler)) }()
	var once sync.Once
	var serr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case serr = <-done:
			case <-time.After(10 * time.Second):
				serr = errors.New("ServeHTTP did not return after its context was cancelled")
			}
		})
		return serr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	return fmt.Sprintf("127.0.0.1:%d", port), stop
}

// serveLimited runs h with at most max open connections.
func serveLimited(t *testing.T, max int, h http.Handler) (addr string, stop func() error) {
	t.Helper()
	return serveWith(t, hub.WithMaxConns(context.Background(), max), h)
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })

func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// status reads one response's status code from c, waiting at most wait.
func status(c net.Conn, br *bufio.Reader, wait time.Duration) (int, error) {
	c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestRequestHeaderBound(t *testing.T) {
	addr, _ := serveLimited(t, hub.DefaultMaxConns, okHandler)
	for _, tc := range []struct {
		name   string
		header int
		want   int
	}{
		{"a 12 KiB target and headers well within", 12 << 10, 200},
		{"just under the bound", hub.MaxRequestHeaderBytes - 1024, 200},
		{"past the bound and net/http's slack", hub.MaxRequestHeaderBytes + 8<<10, http.StatusRequestHeaderFieldsTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			go fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nX-Pad: %s\r\n\r\n", addr, strings.Repeat("p", tc.header))
			got, err := status(c, bufio.NewReader(c), 10*time.Second)
			if err != nil || got != tc.want {
				t.Fatalf("status %d (%v), want %d", got, err, tc.want)
			}
		})
	}
}

// holdHandler serves /hold by telling entered and then blocking until the
// server's context ends or release is closed (a request being served: its
// connection cannot be evicted), and anything else with "ok".
func holdHandler(entered chan<- struct{}, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			entered <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
		w.Write([]byte("ok"))
	})
}

// holdSlots takes n slots with requests that stay in their handler.
func holdSlots(t *testing.T, addr string, n int, entered <-chan struct{}) []net.Conn {
	t.Helper()
	var holders []net.Conn
	for range n {
		c := dialRaw(t, addr)
		fmt.Fprintf(c, "GET /hold HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		<-entered
		holders = append(holders, c)
	}
	return holders
}

// When every slot is being served, connections past the cap wait,
// unanswered, until one of those holding a slot closes; then they are
// served.
func TestConnLimitQueuesWhileAllAreServed(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	addr, _ := serveLimited(t, 2, holdHandler(entered, release))
	holders := holdSlots(t, addr, 2, entered)
	third := dialRaw(t, addr)
	br := bufio.NewReader(third)
	fmt.Fprintf(third, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	if got, err := status(third, br, 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection past the cap was answered (%d, %v)", got, err)
	}
	holders[0].Close()
	if got, err := status(third, br, 10*time.Second); err != nil || got != 200 {
		t.Fatalf("after a slot freed: status %d, %v", got, err)
	}
}

// Issue 7: a flood of connections that trickle their request headers
// (slowloris, reconnecting when cut) no longer holds the port. With the
// header deadline out of reach (an hour), only evicting the connection
// that has been reading its header the longest can make room, and every
// honest request is answered while the flood goes on.
func TestConnLimitEvictsSlowloris(t *testing.T) {
	const max = 4
	ctx := hub.WithHeaderTimeout(hub.WithMaxConns(context.Background(), max), time.Hour)
	addr, _ := serveWith(t, ctx, okHandler)
	flood := adaptertest.StartSlowloris(t, addr, 4*max, 20*time.Millisecond)
	adaptertest.WaitFor(t, "the flood to take every slot", func() bool { return flood.Dialed() >= 4*max })
	for i := range 10 {
		c := dialRaw(t, addr)
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", addr)
		if got, err := status(c, bufio.NewReader(c), adaptertest.WaitTimeout); err != nil || got != 200 {
			t.Fatalf("honest request %d during the flood: status %d, %v (flood: %d dialed, %d cut)",
				i, got, err, flood.Dialed(), flood.Cut())
		}
		c.Close()
	}
	if flood.Cut() == 0 {
		t.Fatal("no slow connection was evicted")
	}
	t.Logf("flood: %d connections dialed, %d cut", flood.Dialed(), flood.Cut())
}

// A connection a handler took over (a WebSocket) gives its slot back: its
// owner bounds it (ws.Endpoint), and plain requests keep being served while
// it stays open.
func TestConnLimitReleasesHijackedConnections(t *testing.T) {
	hijacked := make(chan net.Conn, 2)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/take" {
			w.Write([]byte("ok"))
			return
		}
		c, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		buf.Flush()
		hijacked <- c
	})
	addr, _ := serveLimited(t, 1, h)
	for range 2 {
		c := dialRaw(t, addr)
		fmt.Fprintf(c, "GET /take HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		if got, err := status(c, bufio.NewReader(c), 10*time.Second); err != nil || got != 200 {
			t.Fatalf("take: %d, %v", got, err)
		}
		defer (<-hijacked).Close()
	}
	plain := dialRaw(t, addr)
	fmt.Fprintf(plain, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	if got, err := status(plain, bufio.NewReader(plain), 10*time.Second); err != nil || got != 200 {
		t.Fatalf("a plain request beside two hijacked connections on a 1-slot listener: %d, %v", got, err)
	}
}

// A server whose every slot is being served still stops when its context
// ends: the Accept waiting for a slot gives up.
func TestConnLimitStopsWhileFull(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	addr, stop := serveLimited(t, 1, holdHandler(entered, release))
	holdSlots(t, addr, 1, entered)
	waiting := dialRaw(t, addr) // queued behind it
	fmt.Fprintf(waiting, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	if got, err := status(waiting, bufio.NewReader(waiting), 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection past the cap was answered (%d, %v)", got, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// Keep-alive connections that made a request and then sit idle do not
// hold the port until IdleTimeout: a new connection past the cap closes
// the one idle longest and is served.
func TestConnLimitReclaimsIdleConnections(t *testing.T) {
	addr, _ := serveLimited(t, 2, okHandler)
	var idle []net.Conn
	for range 2 {
		c := dialRaw(t, addr)
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		if got, err := status(c, bufio.NewReader(c), 10*time.Second); err != nil || got != 200 {
			t.Fatalf("first requests: %d, %v", got, err)
		}
		idle = append(idle, c)
	}
	for i := range 3 { // each newcomer takes the slot of the longest idle
		c := dialRaw(t, addr)
		br := bufio.NewReader(c)
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		if got, err := status(c, br, 10*time.Second); err != nil || got != 200 {
			t.Fatalf("newcomer %d past the cap of idle connections: %d, %v", i, got, err)
		}
		idle = append(idle, c)
	}
	// Three were closed to make room, so two still serve, the newest
	// among them. (Which others: those the server saw idle longest, an
	// order its goroutines record, not the client.)
	alive := 0
	for i, c := range idle {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		if _, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			alive++
		} else if i == len(idle)-1 {
			t.Errorf("the newest connection was closed: %v", err)
		}
	}
	if alive != 2 {
		t.Errorf("%d connections still serve, want the cap, 2", alive)
	}
}
