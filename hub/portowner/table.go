package portowner

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// TCP states as the kernel's socket table writes them (include/net/tcp_states.h).
const (
	StateEstablished = 0x01
	StateSynRecv     = 0x03 // also a request socket before the handshake completes
	StateTimeWait    = 0x06
	StateListen      = 0x0A
)

// Socket is one row of the kernel's TCP socket table (/proc/net/tcp or
// /proc/net/tcp6 on Linux).
type Socket struct {
	// Local and Remote are the socket's own and its peer's address; an
	// IPv4-mapped IPv6 address is given as the IPv4 one.
	Local, Remote netip.AddrPort
	State         uint8
	// UID is the socket's owner: the uid of whoever created it (a listener)
	// or accepted it (a connection). The kernel writes 0 for sockets that
	// have no owner (TIME_WAIT, and on older kernels a connection not yet
	// accepted), so 0 counts only together with an Inode.
	UID int
	// Inode is the socket's inode; 0 while no process holds it (a
	// connection not yet accepted, TIME_WAIT).
	Inode uint64
}

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
	if !strings.Contains(sc.Text(), "local_address") {
		return errors.New("socket table: the first line is not the header")
	}
	for rows := 1; sc.Scan(); rows++ {
		if rows > limit {
			return fmt.Errorf("%w: more than %d rows", ErrTableTooLarge, limit)
		}
		s, err := parseRow(sc.Text(), order)
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
func parseRow(line string, order binary.ByteOrder) (Socket, error) {
	f := strings.Fields(line)
	if len(f) < 10 || !strings.HasSuffix(f[0], ":") {
		return Socket{}, errors.New("too few fields")
	}
	var s Socket
	var err error
	if s.Local, err = parseAddrPort(f[1], order); err != nil {
		return Socket{}, fmt.Errorf("local address: %w", err)
	}
	if s.Remote, err = parseAddrPort(f[2], order); err != nil {
		return Socket{}, fmt.Errorf("remote address: %w", err)
	}
	if len(f[3]) != 2 {
		return Socket{}, errors.New("bad state")
	}
	st, err := strconv.ParseUint(f[3], 16, 8)
	if err != nil {
		return Socket{}, errors.New("bad state")
	}
	s.State = uint8(st)
	uid, err := strconv.ParseUint(f[7], 10, 32)
	if err != nil {
		return Socket{}, errors.New("bad uid")
	}
	s.UID = int(uid)
	if s.Inode, err = strconv.ParseUint(f[9], 10, 64); err != nil {
		return Socket{}, errors.New("bad inode")
	}
	return s, nil
}

// parseAddrPort parses "0100007F:1F90": the address as 8 (IPv4) or 32
// (IPv6) hex digits of 32-bit words in order, a colon, the port as 4 hex
// digits.
func parseAddrPort(s string, order binary.ByteOrder) (netip.AddrPort, error) {
	a, p, ok := strings.Cut(s, ":")
	if !ok || len(p) != 4 || (len(a) != 8 && len(a) != 32) {
		return netip.AddrPort{}, fmt.Errorf("%q is not ADDR:PORT in hex", clip(s))
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%q: bad port", clip(s))
	}
	raw, err := hex.DecodeString(a)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%q: bad address", clip(s))
	}
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		// The kernel printed each word as a number in its own order;
		// the word's bytes in memory are the address's bytes.
		order.PutUint32(b[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}

func clip(s string) string {
	if len(s) > 48 {
		return s[:48] + "…"
	}
	return s
}
