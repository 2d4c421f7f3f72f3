package portowner

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// Windows's socket tables: GetExtendedTcpTable's MIB_TCPTABLE_OWNER_PID
// (IPv4) and MIB_TCP6TABLE_OWNER_PID (IPv6) with TCP_TABLE_OWNER_PID_ALL:
// a row count (DWORD), then fixed rows, each with the pid that owns the
// socket. Windows keeps no uid on a socket: the owner is the pid's
// token's user, which table_windows.go looks up (ownerOf).
const (
	// MIB_TCPROW_OWNER_PID: dwState, dwLocalAddr, dwLocalPort,
	// dwRemoteAddr, dwRemotePort, dwOwningPid.
	mibRow4Len = 24
	// MIB_TCP6ROW_OWNER_PID: ucLocalAddr[16], dwLocalScopeId,
	// dwLocalPort, ucRemoteAddr[16], dwRemoteScopeId, dwRemotePort,
	// dwState, dwOwningPid.
	mibRow6Len = 56
)

// windowsStates maps MIB_TCP_STATE to the Linux numbers Socket.State uses.
var windowsStates = [...]uint8{
	0:  0,
	1:  0x07, // CLOSED
	2:  StateListen,
	3:  0x02, // SYN_SENT
	4:  StateSynRecv,
	5:  StateEstablished,
	6:  0x04, // FIN_WAIT1
	7:  0x05, // FIN_WAIT2
	8:  0x08, // CLOSE_WAIT
	9:  0x0B, // CLOSING
	10: 0x09, // LAST_ACK
	11: StateTimeWait,
	12: 0x07, // DELETE_TCB
}

// parseMIBTable reads one GetExtendedTcpTable reply (v6: the IPv6 table)
// and calls visit for every row, in order, until visit returns false. A
// row's Inode is its owning pid (Windows names no socket inode; a
// connection not accepted yet is its listener's process's), its UID what
// ownerOf says of that pid. A count beyond limit is
// ErrTableTooLarge; a count the reply cannot hold, or a state Windows
// does not define, fails the whole table.
func parseMIBTable(b []byte, v6 bool, limit int, ownerOf func(pid uint32) int, visit func(Socket) bool) error {
	le := binary.LittleEndian // windows/amd64 and arm64
	if len(b) < 4 {
		return fmt.Errorf("tcp table: %d bytes, no row count", len(b))
	}
	n := le.Uint32(b)
	if uint64(n) > uint64(limit) {
		return fmt.Errorf("%w: %d rows, more than %d", ErrTableTooLarge, n, limit)
	}
	size := mibRow4Len
	if v6 {
		size = mibRow6Len
	}
	if uint64(len(b)-4) < uint64(n)*uint64(size) {
		return fmt.Errorf("tcp table: %d rows do not fit in %d bytes", n, len(b))
	}
	// A port DWORD holds the port in network order in its low 16 bits:
	// in memory, its first two bytes.
	port := func(p []byte) uint16 { return binary.BigEndian.Uint16(p) }
	for i := range int(n) {
		r := b[4+i*size : 4+(i+1)*size]
		s := Socket{Device: DeviceUnknown}
		var state, pid uint32
		if v6 {
			s.Local = netip.AddrPortFrom(netip.AddrFrom16([16]byte(r[0:16])).Unmap(), port(r[20:]))
			s.Remote = netip.AddrPortFrom(netip.AddrFrom16([16]byte(r[24:40])).Unmap(), port(r[44:]))
			state, pid = le.Uint32(r[48:]), le.Uint32(r[52:])
		} else {
			s.Local = netip.AddrPortFrom(netip.AddrFrom4([4]byte(r[4:8])), port(r[8:]))
			s.Remote = netip.AddrPortFrom(netip.AddrFrom4([4]byte(r[12:16])), port(r[16:]))
			state, pid = le.Uint32(r[0:]), le.Uint32(r[20:])
		}
		if state == 0 || state >= uint32(len(windowsStates)) {
			return fmt.Errorf("tcp table row %d: state %d", i+1, state)
		}
		s.State = windowsStates[state]
		s.Inode = uint64(pid)
		s.UID = ownerOf(pid)
		if !visit(s) {
			return nil
		}
	}
	return nil
}
