package portowner

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
)

// TCP states as the kernel's socket table writes them (include/net/tcp_states.h).
const (
	StateEstablished = 0x01
	StateSynRecv     = 0x03 // also a request socket before the handshake completes
	StateTimeWait    = 0x06
	StateListen      = 0x0A
)

// Socket is one row of the kernel's TCP socket table (/proc/net/tcp or
// /proc/net/tcp6 on Linux), or one socket of a sock_diag reply.
type Socket struct {
	// Local and Remote are the socket's own and its peer's address; an
	// IPv4-mapped IPv6 address is given as the IPv4 one.
	Local, Remote netip.AddrPort
	State         uint8
	// UID is the socket's owner: the uid of whoever created it (a listener)
	// or accepted it (a connection). The kernel writes 0 for sockets that
	// have no owner (TIME_WAIT; a request socket in sock_diag; a
	// connection not yet accepted on older kernels, or on any when its
	// listener is root's), so 0 counts only together with an Inode.
	UID int
	// Inode is the socket's inode; 0 while no process holds it (a
	// connection not yet accepted, TIME_WAIT).
	Inode uint64
	// V6Only is an IPv6 listener's IPV6_V6ONLY: it takes no IPv4
	// connections. Only sock_diag says so; /proc's table cannot, so its
	// rows leave it false.
	V6Only bool
	// Device is the index of the network device the socket is bound to
	// (SO_BINDTODEVICE), 0 for none; a connection has its listener's.
	// Only sock_diag says so: /proc's rows give DeviceUnknown.
	Device int
}

// DeviceUnknown is Socket.Device where the table does not show it.
const DeviceUnknown = -1

// Bounds on one table. A table longer than MaxRows is refused rather than
// read to the end (a partial read could miss the row that matters); every
// local user can add rows, so the bound is generous: a million sockets.
const (
	MaxRows = 1 << 20
	maxLine = 1024 // the kernel writes about 150 bytes a row (tcp6: 180)
)

// ErrTableTooLarge reports a socket table beyond its row limit.
var ErrTableTooLarge = errors.New("socket table too long")

// parseTable reads one table in the /proc/net/tcp format from r and calls
// visit for every row, in order, until visit returns false. Addresses are
// 32-bit words the kernel printed in its own byte order, given as order.
// More than limit rows is ErrTableTooLarge. A row that does not parse
// fails the whole table: skipping it could skip the socket a caller is
// looking for.
func parseTable(r io.Reader, order binary.ByteOrder, limit int, visit func(Socket) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxLine)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return tableErr(err)
		}
		return errors.New("socket table: empty (no header)")
	}
	if !bytes.Contains(sc.Bytes(), []byte("local_address")) {
		return errors.New("socket table: the first line is not the header")
	}
	little := order.Uint32([]byte{1, 0, 0, 0}) == 1
	for rows := 1; sc.Scan(); rows++ {
		if rows > limit {
			return fmt.Errorf("%w: more than %d rows", ErrTableTooLarge, limit)
		}
		s, err := parseRow(sc.Bytes(), little)
		if err != nil {
			return fmt.Errorf("socket table row %d: %w", rows, err)
		}
		if !visit(s) {
			return nil
		}
	}
	return tableErr(sc.Err())
}

func tableErr(err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("socket table: a row longer than %d bytes", maxLine)
	}
	if err != nil {
		return fmt.Errorf("socket table: %w", err)
	}
	return nil
}

// parseRow parses one row:
//
//	sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …
//
// It allocates nothing: a busy machine's table has tens of thousands of
// rows, and a connection check may read them all.
func parseRow(line []byte, little bool) (Socket, error) {
	var f [10][]byte
	n := 0
	for i := 0; i < len(line) && n < len(f); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if j > i {
			f[n] = line[i:j]
			n++
		}
		i = j
	}
	if n < len(f) || f[0][len(f[0])-1] != ':' {
		return Socket{}, errors.New("too few fields")
	}
	s := Socket{Device: DeviceUnknown}
	var err error
	if s.Local, err = parseAddrPort(f[1], little); err != nil {
		return Socket{}, fmt.Errorf("local address: %w", err)
	}
	if s.Remote, err = parseAddrPort(f[2], little); err != nil {
		return Socket{}, fmt.Errorf("remote address: %w", err)
	}
	st, ok := parseHex(f[3], 2)
	if !ok {
		return Socket{}, errors.New("bad state")
	}
	s.State = uint8(st)
	uid, ok := parseDec(f[7], 1<<32-1)
	if !ok {
		return Socket{}, errors.New("bad uid")
	}
	s.UID = int(uid)
	if s.Inode, ok = parseDec(f[9], 1<<64-1); !ok {
		return Socket{}, errors.New("bad inode")
	}
	return s, nil
}

// parseAddrPort parses "0100007F:1F90": the address as 8 (IPv4) or 32
// (IPv6) hex digits of 32-bit words in the kernel's byte order (little or
// big endian), a colon, the port as 4 hex digits.
func parseAddrPort(s []byte, little bool) (netip.AddrPort, error) {
	i := bytes.IndexByte(s, ':')
	if i < 0 || len(s)-i-1 != 4 || (i != 8 && i != 32) {
		return netip.AddrPort{}, fmt.Errorf("%q is not ADDR:PORT in hex", clip(s))
	}
	port, ok := parseHex(s[i+1:], 4)
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("%q: bad port", clip(s))
	}
	var b [16]byte
	for w := 0; w < i/8; w++ {
		word, ok := parseHex(s[w*8:w*8+8], 8)
		if !ok {
			return netip.AddrPort{}, fmt.Errorf("%q: bad address", clip(s))
		}
		// The kernel printed each word as a number in its own order;
		// the word's bytes in memory are the address's bytes.
		if little {
			binary.LittleEndian.PutUint32(b[w*4:], uint32(word))
		} else {
			binary.BigEndian.PutUint32(b[w*4:], uint32(word))
		}
	}
	var addr netip.Addr
	if i == 8 {
		addr = netip.AddrFrom4([4]byte(b[:4]))
	} else {
		addr = netip.AddrFrom16(b).Unmap()
	}
	return netip.AddrPortFrom(addr, uint16(port)), nil
}

// parseHex parses exactly n hex digits (n <= 16).
func parseHex(s []byte, n int) (uint64, bool) {
	if len(s) != n {
		return 0, false
	}
	var v uint64
	for _, c := range s {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}

// parseDec parses a decimal number of at most max.
func parseDec(s []byte, max uint64) (uint64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (max-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

func clip(s []byte) string {
	if len(s) > 48 {
		return string(s[:48]) + "…"
	}
	return string(s)
}

// tableSource answers from whole-table scans: /proc/net/tcp{,6} on
// Linux, recorded tables in tests.
type tableSource scanner

func (scan tableSource) listeners(port uint16, visit func(Socket) bool) error {
	return scan(func(s Socket) bool {
		if s.State != StateListen || s.Local.Port() != port {
			return true
		}
		return visit(s)
	})
}

func (scan tableSource) conn(local, remote netip.AddrPort) (Socket, bool, error) {
	var row Socket
	found := false
	err := scan(func(s Socket) bool {
		if (s.State == StateEstablished || s.State == StateSynRecv) && s.Local == local && s.Remote == remote {
			row, found = s, true
			return false
		}
		return true
	})
	return row, found, err
}
