package hub

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Pre-authentication defaults (WSOptions.PreAuth).
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
)

// PreAuth is the guard every endpoint keeps on a socket until its session
// calls WSConn.Authenticated (the hello or credential was accepted). A peer
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
	OnTooLarge func(c *WSConn)
	// OnTimeout runs before the 1008 close.
	OnTimeout func(c *WSConn)
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
func (e *WSEndpoint) admit() bool {
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
func (e *WSEndpoint) refuseCrowded(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", "1")
	if f := e.opts.PreAuth.OnCrowded; f != nil {
		f(w, r)
		return
	}
	e.thin.Warn(e.opts.Log, "crowded", "refused a WebSocket upgrade: too many sockets waiting to authenticate",
		"max", e.opts.PreAuth.MaxPending)
	WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"ok": false, "error": "busy",
		"message": "too many connections are waiting to authenticate; retry shortly"})
}

// Unauthenticated is the number of this endpoint's sockets that have not
// authenticated yet (upgrades under way included).
func (e *WSEndpoint) Unauthenticated() int { return int(e.pending.Load()) }

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

// preAuthReader enforces PreAuth.Limit on the raw byte stream. gws fixes its
// payload cap per upgrader (the large post-authentication cap) and
// allocates a frame's payload as soon as it has read the header; so the
// reader follows the WebSocket frame headers itself and fails the read when
// a message declares more than limit bytes — before gws has allocated
// anything. Authenticated switches it off.
//
// While on, it never hands gws a byte past the end of the frame being read.
// gws delivers a message before it reads the next header, so the next
// frame's size is judged only after the session has seen the message before
// it: a peer may send a large message right behind its hello (pipelined),
// and it passes once the hello has been accepted.
type preAuthReader struct {
	net.Conn
	limit    uint64
	off      atomic.Bool
	scan     frameScan
	onTooBig func() // tells the peer why, before the read fails
}

// Read implements net.Conn.
func (g *preAuthReader) Read(p []byte) (int, error) {
	if g.off.Load() {
		return g.Conn.Read(p)
	}
	if room := g.scan.room(); room < uint64(len(p)) {
		p = p[:room]
	}
	n, err := g.Conn.Read(p)
	if n > 0 && !g.off.Load() {
		if ferr := g.scan.feed(p[:n], g.limit); ferr != nil {
			g.off.Store(true)
			if g.onTooBig != nil {
				g.onTooBig()
			}
			return 0, ferr
		}
	}
	return n, err
}

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

func (f *frameScan) feed(b []byte, limit uint64) error {
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
		if plen > limit || f.total+plen > limit {
			return ErrPreAuthTooLarge
		}
		f.total += plen
		f.skip = plen
		if fin {
			f.total = 0
			f.messages++
		}
	}
	return nil
}
