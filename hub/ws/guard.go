package ws

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubdev/hub/hub"
)

// Pre-authentication defaults (Options.PreAuth).
const (
	// DefaultPreAuthLimit bounds each message a socket sends before it has
	// authenticated: a hello or a credential is small.
	DefaultPreAuthLimit = 4 << 10
	// DefaultAuthTimeout is how long a socket may stay unauthenticated.
	DefaultAuthTimeout = 10 * time.Second
	// DefaultMaxUnauthenticated caps an endpoint's sockets that have not
	// authenticated yet; honest peers authenticate within a round trip, so
	// only a flood comes near it.
	DefaultMaxUnauthenticated = 64
	// DefaultMaxSockets caps an endpoint's authenticated sockets
	// (Options.MaxSockets). A bridge serves a few pages and agents, a
	// socket each; but where authenticating takes no credential (an aiui
	// hello), anyone local can open sockets that said hello and then stay
	// silent, as an honest page waiting for its user does too. Past the
	// cap the socket silent the longest goes, so a flood of them ends up
	// closing itself while a page that just connected, or one in use, is
	// served.
	DefaultMaxSockets = 128
)

// PreAuth is the guard every endpoint keeps on a socket until its session
// calls Conn.Authenticated (the hello or credential was accepted). A peer
// that has proved nothing can then cost the server little: a few KiB per
// message instead of MaxPayload (gws allocates a frame's payload as soon as
// it has read its header), a bounded time, and a bounded count. The zero
// value means the defaults. A protocol with nothing to authenticate calls
// Authenticated in its handler's Open.
type PreAuth struct {
	// Limit bounds every data message before authentication (default
	// DefaultPreAuthLimit), enforced on the raw byte stream before gws
	// allocates: a message declaring more closes the socket with 1009.
	Limit int
	// Timeout is the authentication deadline (default DefaultAuthTimeout):
	// when it passes the socket is closed with 1008. It does not fire
	// while the session is handling a message: a handshake under way
	// decides for itself.
	Timeout time.Duration
	// MaxPending caps this endpoint's unauthenticated sockets (default
	// DefaultMaxUnauthenticated). An upgrade beyond it is refused with HTTP
	// 503 and Retry-After before anything is hijacked: a refusal at the
	// HTTP level costs nothing, and a browser client does not read it as a
	// verdict on its credential (as it would a 1008).
	MaxPending int

	// The hooks tell the peer (or the adapter's refusal log) why. Each one
	// set replaces the endpoint's own thinned log line for its case.
	//
	// OnTooLarge runs on the read goroutine before the read fails.
	OnTooLarge func(c *Conn)
	// OnTimeout runs before the 1008 close.
	OnTimeout func(c *Conn)
	// OnCrowded writes the refusal of an upgrade over MaxPending; the
	// default is 503 {"ok":false,"error":"busy",…}. Retry-After is set.
	OnCrowded func(w http.ResponseWriter, r *http.Request)
}

func (p PreAuth) withDefaults() PreAuth {
	if p.Limit <= 0 {
		p.Limit = DefaultPreAuthLimit
	}
	if p.Timeout <= 0 {
		p.Timeout = DefaultAuthTimeout
	}
	if p.MaxPending <= 0 {
		p.MaxPending = DefaultMaxUnauthenticated
	}
	return p
}

// ErrPreAuthTooLarge ends a socket whose message before authentication
// declares more than its endpoint's PreAuth.Limit.
var ErrPreAuthTooLarge = errors.New("message before authentication too large")

// admit takes one of the endpoint's unauthenticated slots.
func (e *Endpoint) admit() bool {
	for {
		n := e.pending.Load()
		if n >= int64(e.opts.PreAuth.MaxPending) {
			return false
		}
		if e.pending.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// refuseCrowded answers an upgrade over the cap.
func (e *Endpoint) refuseCrowded(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", "1")
	if f := e.opts.PreAuth.OnCrowded; f != nil {
		f(w, r)
		return
	}
	e.thin.Warn(e.opts.Log, "crowded", "refused a WebSocket upgrade: too many sockets waiting to authenticate",
		"max", e.opts.PreAuth.MaxPending)
	hub.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"ok": false, "error": "busy",
		"message": "too many connections are waiting to authenticate; retry shortly"})
}

// enroll counts an authenticated socket against MaxSockets, closing the
// one silent the longest when the endpoint is full. The close (a close
// frame, bounded by a second) runs on its own goroutine: the caller is a
// session's read goroutine, which may hold its adapter's locks.
func (e *Endpoint) enroll(c *Conn) {
	c.lastMsg.Store(e.msgs.Add(1))
	e.amu.Lock()
	if e.authed == nil {
		e.authed = map[*Conn]struct{}{}
	}
	var victim *Conn
	if len(e.authed) >= e.opts.MaxSockets {
		for o := range e.authed {
			if victim == nil || o.lastMsg.Load() < victim.lastMsg.Load() {
				victim = o
			}
		}
		delete(e.authed, victim)
	}
	e.authed[c] = struct{}{}
	e.amu.Unlock()
	if victim == nil {
		return
	}
	e.thin.Warn(e.opts.Log, "evict", "closing the socket silent the longest: the endpoint holds its most authenticated sockets",
		"max", e.opts.MaxSockets)
	c.Guard().Go("websocket eviction", func() {
		victim.Close(1013, "too many connections: closing the one silent the longest")
	})
}

// unenroll forgets a closed socket.
func (e *Endpoint) unenroll(c *Conn) {
	e.amu.Lock()
	delete(e.authed, c)
	e.amu.Unlock()
}

// Authenticated is the number of this endpoint's authenticated sockets
// (at most MaxSockets; one being evicted no longer counts).
func (e *Endpoint) Authenticated() int {
	e.amu.Lock()
	defer e.amu.Unlock()
	return len(e.authed)
}

// Unauthenticated is the number of this endpoint's sockets that have not
// authenticated yet (upgrades under way included).
func (e *Endpoint) Unauthenticated() int { return int(e.pending.Load()) }

// connResponse is the http.ResponseWriter of a refusal on a connection that
// was not accepted by an http.Server (ServeConn): it writes the response
// when done.
type connResponse struct {
	hdr    http.Header
	status int
	body   bytes.Buffer
}

func (c *connResponse) Header() http.Header         { return c.hdr }
func (c *connResponse) WriteHeader(status int)      { c.status = status }
func (c *connResponse) Write(b []byte) (int, error) { return c.body.Write(b) }

func (c *connResponse) send(conn net.Conn) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.hdr.Set("Content-Length", strconv.Itoa(c.body.Len()))
	c.hdr.Set("Connection", "close")
	w := bufio.NewWriter(conn)
	w.WriteString("HTTP/1.1 " + strconv.Itoa(c.status) + " " + http.StatusText(c.status) + "\r\n")
	c.hdr.Write(w)
	w.WriteString("\r\n")
	w.Write(c.body.Bytes())
	w.Flush()
}

// guardReader sits between a socket and gws, following the WebSocket frame
// headers of the raw byte stream itself: gws fixes its payload cap per
// upgrader and allocates a frame's payload as soon as it has read the
// header, so anything that must judge a frame before it costs memory has
// to see the header first. It has three modes:
//
//   - Before authentication it enforces PreAuth.Limit: a message declaring
//     more fails the read before gws has allocated anything. It never hands
//     gws a byte past the end of the frame being read, and gws delivers a
//     message before it reads the next header, so the next frame's size is
//     judged only after the session has seen the message before it: a peer
//     may send a large message right behind its hello (pipelined), and it
//     passes once the hello has been accepted.
//   - After authentication, with a Budget, a message over hub.BudgetFloor takes
//     its bytes from the endpoint's budget as its headers arrive (waiting
//     for room, so gws allocates only what the budget allows), and gives
//     them back once the session has handled it (release). While it is
//     being received, reads stop at its frames' ends, so nothing of the
//     next message is judged before the session has seen this one.
//   - Otherwise it passes bytes through.
type guardReader struct {
	net.Conn
	mode     atomic.Int32 // guardPreAuth, guardBudget or guardOff
	scan     frameScan
	limit    uint64
	onTooBig func() // tells the peer why, before the read fails

	budget  *hub.Budget
	wait    time.Duration
	maxMsg  uint64        // gws refuses a message over this itself
	stop    chan struct{} // closed when the socket is closing: a wait ends
	stopped sync.Once
	total   uint64          // bytes of the message being received
	held    int64           // of them, taken from the budget
	onShort func(err error) // tells the peer why a budgeted read fails
	// beforeWait runs before a read waits for room in the budget (sends
	// the connection's held writes); nil: nothing.
	beforeWait func()
}

const (
	guardPreAuth int32 = iota
	guardBudget
	guardOff
)

func newGuardReader(c net.Conn, limit uint64, budget *hub.Budget, wait time.Duration, maxMsg int) *guardReader {
	return &guardReader{Conn: c, limit: limit, budget: budget, wait: wait, maxMsg: uint64(maxMsg), stop: make(chan struct{})}
}

// authenticated switches from the pre-authentication limit to the budget.
func (g *guardReader) authenticated() {
	if g.budget != nil {
		g.mode.Store(guardBudget)
	} else {
		g.mode.Store(guardOff)
	}
}

// Read implements net.Conn.
func (g *guardReader) Read(p []byte) (int, error) {
	mode := g.mode.Load()
	if mode == guardOff {
		return g.Conn.Read(p)
	}
	if mode == guardPreAuth || g.held > 0 {
		if room := g.scan.room(); room < uint64(len(p)) {
			p = p[:room]
		}
	}
	n, err := g.Conn.Read(p)
	if n == 0 || g.mode.Load() == guardOff {
		return n, err
	}
	if g.mode.Load() == guardPreAuth {
		if ferr := g.scan.feed(p[:n], g.limit); ferr != nil {
			g.mode.Store(guardOff)
			if g.onTooBig != nil {
				g.onTooBig()
			}
			return 0, ferr
		}
		return n, err
	}
	if ferr := g.scan.scan(p[:n], g.take); ferr != nil {
		g.mode.Store(guardOff)
		if g.onShort != nil {
			g.onShort(ferr)
		}
		return 0, ferr
	}
	return n, err
}

// take accounts one data frame header of an authenticated socket.
func (g *guardReader) take(op byte, plen uint64, _ bool) error {
	if op != 0 { // a new message: the one before it was handled (release)
		g.total = 0
	}
	g.total += min(plen, 1<<62) // no wrap, whatever a header declares
	if g.total <= hub.BudgetFloor || g.total > g.maxMsg {
		return nil // small, or refused by gws before it allocates
	}
	if need := int64(g.total) - g.held; need > 0 {
		if !g.budget.TryAcquire(need) {
			if g.beforeWait != nil {
				g.beforeWait()
			}
			if err := g.budget.Acquire(need, g.wait, g.stop); err != nil {
				return err
			}
		}
		g.held += need
	}
	return nil
}

// release gives back what the message just handled took from the budget.
// It runs on the read goroutine (the session has returned), or when the
// socket has closed.
func (g *guardReader) release() {
	if g.held > 0 {
		g.budget.Release(g.held)
	}
	g.held, g.total = 0, 0
}

// close ends a wait for room: the socket is closing.
func (g *guardReader) close() { g.stopped.Do(func() { close(g.stop) }) }

// frameScan follows client→server WebSocket frame headers (RFC 6455 §5.2)
// across arbitrary read boundaries, skipping payloads. Control frames
// (≤125 bytes by the RFC) may come between data frames; a fragmented
// message is summed over its fragments.
type frameScan struct {
	hdr      [14]byte
	hlen     int
	need     int
	skip     uint64 // payload bytes of the current frame still to come
	total    uint64 // bytes of the current message so far
	messages int    // data messages whose last header has been seen
}

// room is how many bytes can be read without passing the end of the
// current frame (at least 1).
func (f *frameScan) room() uint64 {
	switch {
	case f.skip > 0:
		return f.skip
	case f.hlen < 2:
		return uint64(2 - f.hlen)
	default:
		return uint64(f.need - f.hlen)
	}
}

// feed enforces limit on every message: before authentication.
func (f *frameScan) feed(b []byte, limit uint64) error {
	return f.scan(b, func(_ byte, plen uint64, fin bool) error {
		if plen > limit || f.total+plen > limit {
			return ErrPreAuthTooLarge
		}
		f.total += plen
		if fin {
			f.total = 0
			f.messages++
		}
		return nil
	})
}

// scan follows the headers in b, calling onData with each data frame's
// opcode (0 for a continuation), payload length and fin bit once its
// header is complete; an error from onData ends the scan.
func (f *frameScan) scan(b []byte, onData func(op byte, plen uint64, fin bool) error) error {
	for len(b) > 0 {
		if f.skip > 0 {
			k := min(uint64(len(b)), f.skip)
			f.skip -= k
			b = b[k:]
			continue
		}
		f.hdr[f.hlen] = b[0]
		f.hlen++
		b = b[1:]
		if f.hlen == 2 {
			f.need = 2
			switch f.hdr[1] & 0x7f {
			case 126:
				f.need += 2
			case 127:
				f.need += 8
			}
			if f.hdr[1]&0x80 != 0 {
				f.need += 4
			}
		}
		if f.hlen < 2 || f.hlen < f.need {
			continue
		}
		var plen uint64
		switch l7 := f.hdr[1] & 0x7f; l7 {
		case 126:
			plen = uint64(binary.BigEndian.Uint16(f.hdr[2:4]))
		case 127:
			plen = binary.BigEndian.Uint64(f.hdr[2:10])
		default:
			plen = uint64(l7)
		}
		op, fin := f.hdr[0]&0x0f, f.hdr[0]&0x80 != 0
		f.hlen, f.need = 0, 0
		if op >= 8 { // control frame
			if plen > 125 {
				return ErrPreAuthTooLarge
			}
			f.skip = plen
			continue
		}
		if err := onData(op, plen, fin); err != nil {
			return err
		}
		f.skip = plen
	}
	return nil
}
