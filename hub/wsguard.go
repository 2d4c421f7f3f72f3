package hub

import (
	"encoding/binary"
	"errors"
	"net"
	"sync/atomic"
)

// ErrFirstMessageTooLarge ends a socket whose first data message declares
// more than its endpoint's FirstMessageLimit.
var ErrFirstMessageTooLarge = errors.New("first message too large")

// firstMessageGuard enforces a limit on the first data message on the raw
// byte stream. gws fixes its payload cap per upgrader (the large
// post-authentication cap) and allocates a frame's payload as soon as it
// has read the header; so the guard reads the WebSocket frame headers
// itself and fails the read when the first data message declares more than
// limit bytes — before gws has allocated anything. Once that message's
// size is known to be fine, the guard switches itself off.
type firstMessageGuard struct {
	net.Conn
	limit    uint64
	off      atomic.Bool
	scan     frameScan
	onTooBig func() // tells the peer why, before the read fails
}

// Read implements net.Conn.
func (g *firstMessageGuard) Read(p []byte) (int, error) {
	n, err := g.Conn.Read(p)
	if n > 0 && !g.off.Load() {
		if ferr := g.scan.feed(p[:n], g.limit); ferr != nil {
			g.off.Store(true)
			if g.onTooBig != nil {
				g.onTooBig()
			}
			return 0, ferr
		}
		if g.scan.done {
			g.off.Store(true)
		}
	}
	return n, err
}

// frameScan follows client→server WebSocket frame headers (RFC 6455 §5.2)
// across arbitrary read boundaries, skipping payloads, until the first data
// message is complete. Control frames (≤125 bytes by the RFC) may come
// before it; a fragmented first message is summed over its fragments.
type frameScan struct {
	hdr   [14]byte
	hlen  int
	need  int
	skip  uint64
	total uint64
	done  bool
}

func (f *frameScan) feed(b []byte, limit uint64) error {
	for len(b) > 0 && !f.done {
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
				return ErrFirstMessageTooLarge
			}
			f.skip = plen
			continue
		}
		if plen > limit || f.total+plen > limit {
			return ErrFirstMessageTooLarge
		}
		f.total += plen
		if fin {
			f.done = true
			return nil
		}
		f.skip = plen
	}
	return nil
}
