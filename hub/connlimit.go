package hub

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// Bounds on what a connection costs before any handler has judged it.
const (
	// MaxRequestHeaderBytes bounds a request's line and headers (net/http
	// would read 1 MiB). Browsers send a few KiB to a loopback port and
	// geturl's longest request target is 12 KiB, so 32 KiB refuses no
	// honest client (431 beyond it), while a peer that sends a huge header
	// and stalls holds at most this much until ReadHeaderTimeout.
	MaxRequestHeaderBytes = 32 << 10
	// DefaultMaxConns caps one listener's open connections (idle,
	// reading, serving or upgraded alike). A bridge has a few pages and
	// agents; a flood of half-sent requests would otherwise cost memory
	// without bound (measured: 300 connections each stalling behind a
	// 1 MB header took a hub from 19 to 570 MiB RSS; 2,000 stalling
	// behind 30 KiB now peak at about 50 MiB). Beyond the cap new
	// connections wait in the kernel's accept queue until one closes, so
	// an honest client is delayed by a flood, never refused by the hub;
	// and each one that waits first closes the longest-idle keep-alive
	// connection, so connections that made a request and then sit idle
	// cannot hold the port for IdleTimeout.
	DefaultMaxConns = 256
)

type maxConnsKey struct{}

// WithMaxConns makes ServeHTTP servers started with ctx cap their open
// connections at n instead of DefaultMaxConns (tests use a small one).
func WithMaxConns(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, maxConnsKey{}, n)
}

func maxConnsFrom(ctx context.Context) int {
	if n, ok := ctx.Value(maxConnsKey{}).(int); ok && n > 0 {
		return n
	}
	return DefaultMaxConns
}

// connLimit is a listener that holds at most cap(slots) connections open:
// Accept waits for a slot, and a connection gives its slot back when it is
// closed (by the server, or by whoever hijacked it). Its ConnState, set on
// the http.Server, tells it which connections sit idle between requests.
type connLimit struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	close sync.Once
	full  LogThinner
	log   *slog.Logger

	mu   sync.Mutex
	idle map[*limitedConn]time.Time // keep-alive connections between requests, and since when
}

func limitConns(ln net.Listener, n int, log *slog.Logger) *connLimit {
	return &connLimit{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{}), log: log,
		idle: make(map[*limitedConn]time.Time)}
}

// ConnState records which connections are idle (http.Server.ConnState).
func (l *connLimit) ConnState(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if state == http.StateIdle {
		l.idle[lc] = time.Now()
	} else {
		delete(l.idle, lc)
	}
}

// closeLongestIdle closes the keep-alive connection idle the longest, if
// any: HTTP lets a server close an idle connection at any time (a client
// retries its next request on a new one), and a waiting new connection
// needs the slot more.
func (l *connLimit) closeLongestIdle() {
	l.mu.Lock()
	var oldest *limitedConn
	var since time.Time
	for c, t := range l.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	delete(l.idle, oldest)
	l.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
}

// Accept takes the next connection from the kernel's queue, then waits for
// a slot. It takes the connection first so that an idle one is closed only
// when somebody is actually waiting; at most that one connection waits in
// the hub, the rest stay in the kernel's queue.
func (l *connLimit) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		// http.Server retries these and logs them only at debug level;
		// running out of descriptors must be visible at the default one.
		if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
			if count, ok := l.full.Note("fds"); ok {
				l.log.Warn("cannot accept connections: out of file descriptors (raise `ulimit -n`); retrying",
					"addr", l.Addr().String(), "err", err, "count", count)
			}
		}
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
	default:
		if count, ok := l.full.Note("full"); ok {
			l.log.Warn("connection limit reached: new connections wait until one closes",
				"addr", l.Addr().String(), "max", cap(l.slots), "count", count)
		}
		l.closeLongestIdle()
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *connLimit) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its slot back on its first Close.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// ReadFrom and CloseWrite pass through to the TCP connection, so net/http
// still sends files with sendfile and half-closes before closing.
func (c *limitedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
