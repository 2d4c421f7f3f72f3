package hub

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
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
	// an honest client is delayed by a flood, never refused by the hub.
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
// closed (by the server, or by whoever hijacked it).
type connLimit struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	close sync.Once
	full  LogThinner
	log   *slog.Logger
}

func limitConns(ln net.Listener, n int, log *slog.Logger) *connLimit {
	return &connLimit{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{}), log: log}
}

func (l *connLimit) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		if count, ok := l.full.Note("full"); ok {
			l.log.Warn("connection limit reached: new connections wait until one closes",
				"addr", l.Addr().String(), "max", cap(l.slots), "count", count)
		}
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
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
