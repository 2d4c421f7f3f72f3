package hub

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hubdev/hub/hub/rawio"
)

// Bounds on what a connection costs before any handler has judged it.
const (
	// MaxRequestHeaderBytes bounds a request's line and headers (net/http
	// would read 1 MiB). Browsers send a few KiB to a loopback port and
	// geturl's longest request target is 12 KiB, so 32 KiB refuses no
	// honest client (431 beyond it), while a peer that sends a huge header
	// and stalls holds at most this much until the header deadline.
	MaxRequestHeaderBytes = 32 << 10
	// DefaultHeaderTimeout is how long a request's line and headers may
	// take to arrive: from the moment the connection is accepted for the
	// first request, from its first four bytes for a later one on a
	// keep-alive connection (net/http waits for those before it arms the
	// deadline; the idle timeout bounds the wait). The deadline is
	// absolute: net/http sets it once per request, and a byte arriving
	// does not extend it. A loopback client sends its whole header in one
	// write, so 5 s refuses nobody honest.
	DefaultHeaderTimeout = 5 * time.Second
	// DefaultMaxConns caps one listener's open HTTP connections (reading a
	// header, serving a request, or idle between requests). A connection
	// a handler has taken over (a WebSocket) gives its slot back: its
	// owner bounds it (WSOptions.MaxSockets, PreAuth.MaxPending), so
	// sockets can never starve the HTTP routes (/health, a control plane)
	// of slots. A bridge has a few pages and agents; a flood of half-sent
	// requests would otherwise cost memory without bound (measured: 300
	// connections each stalling behind a 1 MB header took a hub from 19
	// to 570 MiB RSS; 2,000 stalling behind 30 KiB now peak at about
	// 50 MiB).
	//
	// When every slot is taken, a new connection takes the slot of a
	// connection that keeps the server waiting for bytes its client has
	// not sent, oldest first among (in this order) those that sent part
	// of a request header and stopped, those that have sent nothing for
	// evictGrace since they were accepted, those idle between requests,
	// and those whose request body has been arriving for evictGrace. A
	// connection the server has not read yet is left alone (its whole
	// request may be waiting), and so is one whose header is in. Honest
	// loopback clients send a header and a body in one write and may lose
	// an idle keep-alive connection at any time (HTTP lets a server close
	// one; the client retries on a new connection), so a flood of
	// connections trickling their headers (slowloris) or bodies, or
	// sending nothing, only evicts itself. When no connection can be
	// evicted, new connections wait, in the kernel's accept queue, until
	// one closes or can be.
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

type headerTimeoutKey struct{}

// WithHeaderTimeout makes ServeHTTP servers started with ctx give a
// request's header d to arrive instead of DefaultHeaderTimeout (tests use
// a long one, so that only eviction frees a slot).
func WithHeaderTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, headerTimeoutKey{}, d)
}

func headerTimeoutFrom(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(headerTimeoutKey{}).(time.Duration); ok && d > 0 {
		return d
	}
	return DefaultHeaderTimeout
}

// phase is where a connection holding a slot is in its request cycle.
type phase int

const (
	phaseHeader  phase = iota // reading a request's header: no handler has it yet
	phaseIdle                 // keep-alive, between requests
	phaseBody                 // a handler has the request; its body is still arriving
	phaseServing              // a handler has the request and its whole body (or it has none)
)

// evictGrace is how long a connection that has sent nothing yet, or whose
// request body is arriving, is safe from eviction: an honest client writes
// its request as soon as it has connected, and a loopback body arrives in
// milliseconds, but on a machine a flood saturates the client may need a
// while to be scheduled (measured: with 100 ms, honest requests under a
// 7,500-socket flood on two cores were cut before their client wrote
// them). It also bounds how fast a flood of silent connections can
// cycle: a slot per evictGrace. A connection that has sent part of a
// header and stopped gets none.
const evictGrace = 500 * time.Millisecond

// connLimit is a listener that holds at most cap(slots) HTTP connections
// open: Accept takes a slot (evicting, when all are taken, a connection
// the server is waiting on), and a connection gives its slot back when it
// is closed, or when a handler hijacks it. ConnState (set on the
// http.Server), ConnContext, the handler wrapper serve and the
// connections' own reads tell it what each connection is doing.
type connLimit struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	close sync.Once
	full  LogThinner
	log   *slog.Logger

	mu    sync.Mutex
	conns map[*limitedConn]struct{} // every connection holding a slot

	// An Accept that found nothing to evict sets waiting and waits for a
	// slot, for a grace to end, or for a wake: a connection starting a
	// read may have become evictable.
	waiting atomic.Bool
	wake    chan struct{}
}

func limitConns(ln net.Listener, n int, log *slog.Logger) *connLimit {
	return &connLimit{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{}), log: log,
		conns: make(map[*limitedConn]struct{}), wake: make(chan struct{}, 1)}
}

// enter moves c to phase p (when it still holds a slot).
func (l *connLimit) enter(c *limitedConn, p phase) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.conns[c]; ok {
		c.phase, c.at = p, time.Now()
	}
}

// ConnState follows each connection's phase (http.Server.ConnState).
// net/http runs the next request's header read of a keep-alive connection
// while the connection is still StateIdle, and reports StateActive once it
// has read the header (documented as: once it has read a byte of it);
// either way the connection's own reads say whether the header is in.
func (l *connLimit) ConnState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*limitedConn)
	if !ok {
		return
	}
	switch state {
	case http.StateActive:
		l.mu.Lock()
		if _, ok := l.conns[c]; ok && c.phase == phaseIdle {
			c.phase, c.at = phaseHeader, time.Now()
		}
		l.mu.Unlock()
	case http.StateIdle:
		c.newRequest()
		l.enter(c, phaseIdle)
	case http.StateHijacked:
		// Its new owner bounds it from here on (WSEndpoint); the slot
		// goes back to HTTP.
		l.forget(c)
		c.once.Do(c.release)
	case http.StateClosed:
		l.forget(c)
	}
}

func (l *connLimit) forget(c *limitedConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

type connKey struct{}

// ConnContext lets the handler wrapper find the request's connection
// (http.Server.ConnContext).
func (l *connLimit) ConnContext(ctx context.Context, nc net.Conn) context.Context {
	if c, ok := nc.(*limitedConn); ok {
		return context.WithValue(ctx, connKey{}, c)
	}
	return ctx
}

// serve marks a request's connection as served from the moment a handler
// has it, and as reading a body while the request's body is arriving (the
// body is done at its end, or when the handler closes it).
func (l *connLimit) serve(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := r.Context().Value(connKey{}).(*limitedConn)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if r.Body == nil || r.Body == http.NoBody {
			l.enter(c, phaseServing)
		} else {
			l.enter(c, phaseBody)
			r.Body = &trackedBody{ReadCloser: r.Body, done: func() { l.enter(c, phaseServing) }}
		}
		next.ServeHTTP(w, r)
	})
}

// trackedBody calls done once, when the body has been read to its end or
// closed.
type trackedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.done)
	}
	return n, err
}

func (b *trackedBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}

// rank orders the connections a full listener may close: the lowest
// rank goes first, and the oldest within a rank.
type rank int

const (
	rankStalled rank = iota // sent part of a request header, then waits: no honest client does that
	rankSilent              // has sent nothing since it opened, past its grace
	rankIdle                // keep-alive between requests, has sent nothing since
	rankBody                // its request body has been arriving for longer than the grace
	rankKeep                // may not be closed (now)
)

var rankNames = [...]string{"stalled header", "silent", "idle", "slow body"}

// rank says where c stands at now; for a connection kept only for its
// grace, also when the grace ends. A connection the server is not blocked
// reading is kept: its goroutine has not read yet (its whole request may
// be waiting), or a handler has it.
func (c *limitedConn) rank(now time.Time) (rank, time.Time) {
	if c.phase == phaseServing || c.reads.Load() == 0 {
		return rankKeep, time.Time{}
	}
	grace := func(r rank) (rank, time.Time) {
		if from := c.at.Add(evictGrace); now.Before(from) {
			return rankKeep, from
		}
		return r, time.Time{}
	}
	switch {
	case c.phase == phaseBody:
		return grace(rankBody)
	case c.headerIn.Load():
		return rankKeep, time.Time{} // a whole header is in: waiting for its handler, not for its client
	case c.gotBytes.Load():
		return rankStalled, time.Time{}
	case c.phase == phaseIdle:
		return rankIdle, time.Time{}
	default:
		return grace(rankSilent)
	}
}

// evict closes the connection of the lowest rank that has held it the
// longest, and reports the rank. When none may be closed, it reports the
// earliest time one might (zero: none will by time alone).
func (l *connLimit) evict() (r rank, retry time.Time) {
	now := time.Now()
	l.mu.Lock()
	var victim *limitedConn
	best := rankKeep
	for c := range l.conns {
		cr, from := c.rank(now)
		if cr == rankKeep {
			if !from.IsZero() && (retry.IsZero() || from.Before(retry)) {
				retry = from
			}
			continue
		}
		if victim == nil || cr < best || (cr == best && c.at.Before(victim.at)) {
			victim, best = c, cr
		}
	}
	if victim == nil {
		l.mu.Unlock()
		return rankKeep, retry
	}
	delete(l.conns, victim)
	l.mu.Unlock()
	victim.Close() // gives the slot back now; its server goroutine ends on the read error
	return best, time.Time{}
}

// Accept takes the next connection from the kernel's queue, then a slot.
// It takes the connection first so that a connection is evicted only when
// somebody is actually waiting; at most that one connection waits in the
// hub, the rest stay in the kernel's queue.
func (l *connLimit) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
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
	if err := l.takeSlot(); err != nil {
		nc.Close()
		return nil, err
	}
	c := &limitedConn{Conn: rawio.Wrap(nc), l: l, release: func() { <-l.slots }}
	l.mu.Lock()
	c.phase, c.at = phaseHeader, time.Now()
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	return c, nil
}

// takeSlot takes a free slot, or makes one by evicting, or waits for one
// to free or for a connection to become evictable.
func (l *connLimit) takeSlot() error {
	warned := false
	var timer *time.Timer
	defer func() {
		l.waiting.Store(false)
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case l.slots <- struct{}{}:
			return nil
		default:
		}
		l.waiting.Store(true)
		r, retry := l.evict()
		if r != rankKeep {
			if count, ok := l.full.Note("evict " + rankNames[r]); ok {
				l.log.Warn("connection limit reached: closed a connection that kept the server waiting, to make room",
					"addr", l.Addr().String(), "max", cap(l.slots), "which", rankNames[r], "count", count)
			}
			continue // its slot is free now
		}
		if !warned {
			warned = true
			if count, ok := l.full.Note("full"); ok {
				l.log.Warn("connection limit reached: new connections wait until one closes",
					"addr", l.Addr().String(), "max", cap(l.slots), "count", count)
			}
		}
		var graceOver <-chan time.Time
		if !retry.IsZero() {
			if timer == nil {
				timer = time.NewTimer(time.Until(retry))
			} else {
				timer.Reset(time.Until(retry))
			}
			graceOver = timer.C
		}
		select {
		case l.slots <- struct{}{}:
			return nil
		case <-l.wake:
		case <-graceOver:
		case <-l.done:
			return net.ErrClosed
		}
	}
}

func (l *connLimit) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its slot back on its first Close (or when hijacked),
// counts the reads the server is blocked in, and notes what has arrived
// of the current request's header (net/http's hooks cannot say:
// StateActive is documented to fire on a request's first byte, and the
// server starts a background read before the handler runs).
type limitedConn struct {
	net.Conn
	l       *connLimit
	once    sync.Once
	release func()
	reads   atomic.Int32 // Read calls under way

	// Since the connection opened or last went idle: gotBytes is set once
	// a byte has arrived, headerIn once a blank line has (CRLF CRLF, or LF
	// LF, which net/http accepts too), the end of a request header; tail
	// holds the last bytes read until then.
	gotBytes atomic.Bool
	headerIn atomic.Bool
	tail     atomic.Uint32

	// Under connLimit.mu.
	phase phase
	at    time.Time // when it entered phase
}

// newRequest starts watching for the next request's header.
func (c *limitedConn) newRequest() {
	c.tail.Store(0)
	c.gotBytes.Store(false)
	c.headerIn.Store(false)
}

func (c *limitedConn) Read(p []byte) (int, error) {
	c.reads.Add(1)
	if c.l.waiting.Load() {
		select {
		case c.l.wake <- struct{}{}:
		default:
		}
	}
	n, err := c.Conn.Read(p)
	if n > 0 && !c.headerIn.Load() {
		c.gotBytes.Store(true)
		c.scanHeader(p[:n])
	}
	c.reads.Add(-1)
	return n, err
}

// scanHeader looks for the blank line that ends a request header.
func (c *limitedConn) scanHeader(b []byte) {
	tail := c.tail.Load()
	for _, x := range b {
		tail = tail<<8 | uint32(x)
		if tail == '\r'<<24|'\n'<<16|'\r'<<8|'\n' || tail&0xffff == '\n'<<8|'\n' {
			c.headerIn.Store(true)
			break
		}
	}
	c.tail.Store(tail)
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

// NetConn is the connection under the listener's bookkeeping, for the
// owner of a hijacked connection (rawio.Bounder finds its write bound
// through it).
func (c *limitedConn) NetConn() net.Conn { return c.Conn }

func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
