package portowner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// macOS's socket table: the reply of sysctl net.inet.tcp.pcblist_n, read
// by anyone, with every user's TCP sockets and their owners' uids. It is
// an xinpgen header (24 bytes) and then, per socket, a run of blocks that
// each begin with their length and kind (xnu bsd/netinet/in_pcblist.c):
// xinpcb_n (addresses, ports), xsocket_n (uid, pid), two xsockbuf_n, an
// xsockstat_n and xtcpcb_n (state), each padded to 8 bytes; a trailing
// xinpgen ends it. The structures are private to xnu (#pragma pack(4));
// the offsets below are theirs, and the parser checks every length
// before it reads, and refuses a reply it cannot read whole.
const (
	xinpgenLen = 24

	xsoSocket = 0x001
	xsoInpcb  = 0x010
	xsoTcpcb  = 0x020

	// xinpcb_n: xi_len, xi_kind, xi_inpp, inp_fport, inp_lport, inp_ppcb,
	// inp_gencnt, inp_flags, inp_flow, inp_vflag, inp_ip_ttl, inp_ip_p,
	// then the foreign and the local address (16 bytes each: an IPv6
	// address, or an IPv4 one after 12 bytes of padding).
	inpcbFport = 16
	inpcbLport = 18
	inpcbVflag = 44
	inpcbFaddr = 48
	inpcbLaddr = 64
	inpcbMin   = inpcbLaddr + 16
	inpIPv4    = 0x1
	inpIPv6    = 0x2

	// xsocket_n: so_uid follows the socket's handles, options, counts
	// and pgid; so_last_pid, the last process to use it, follows so_uid.
	xsocketUID     = 64
	xsocketLastPID = 68
	xsocketMin     = xsocketLastPID + 4

	// xtcpcb_n: t_state follows t_segq, t_dupacks and four timers.
	xtcpcbState = 36
	xtcpcbMin   = xtcpcbState + 4
)

// darwinStates maps xnu's TCP states (netinet/tcp_fsm.h) to the Linux
// numbers Socket.State uses.
var darwinStates = [...]uint8{
	0:  0x07, // CLOSED
	1:  StateListen,
	2:  0x02, // SYN_SENT
	3:  StateSynRecv,
	4:  StateEstablished,
	5:  0x08, // CLOSE_WAIT
	6:  0x04, // FIN_WAIT_1
	7:  0x0B, // CLOSING
	8:  0x09, // LAST_ACK
	9:  0x05, // FIN_WAIT_2
	10: StateTimeWait,
}

// parsePCBList reads a pcblist_n reply and calls visit for every socket,
// in order, until visit returns false. A socket's Inode is the pid that
// last used it (macOS names no socket inode; the pid is what names the
// holder), 0 when none; a connection not accepted yet has its listener's
// uid and pid (xnu's sonewconn copies both), so it reads as its
// listener's, which is who will accept it. More than limit sockets is ErrTableTooLarge. A
// block too short for what is read from it, a socket missing its uid or
// state, or a reply cut short fails the whole table: skipping a socket
// could skip the one a caller is looking for.
func parsePCBList(b []byte, limit int, visit func(Socket) bool) error {
	le := binary.LittleEndian // both macOS architectures
	if len(b) < xinpgenLen {
		return errors.New("pcblist: shorter than its header")
	}
	if n := le.Uint32(b); n != xinpgenLen {
		return fmt.Errorf("pcblist: a header of %d bytes, not %d (a layout this build does not know)", n, xinpgenLen)
	}
	var (
		cur              Socket
		open, sock, tcpc bool
		count            int
	)
	flush := func() (bool, error) {
		if !open {
			return true, nil
		}
		open = false
		if !sock || !tcpc {
			return false, fmt.Errorf("pcblist: socket %d has no socket or TCP block", count)
		}
		return visit(cur), nil
	}
	off := xinpgenLen
	for {
		if len(b)-off < 8 {
			return errors.New("pcblist: cut short (no trailer)")
		}
		n, kind := int(le.Uint32(b[off:])), le.Uint32(b[off+4:])
		if n <= xinpgenLen {
			// The trailing xinpgen (its second word is a count, not a
			// kind): every block of a socket is longer.
			if n != xinpgenLen || len(b)-off < xinpgenLen {
				return fmt.Errorf("pcblist: a block of %d bytes", n)
			}
			_, err := flush()
			return err
		}
		if n > len(b)-off {
			return fmt.Errorf("pcblist: a block of %d bytes with %d left", n, len(b)-off)
		}
		blk := b[off : off+n]
		switch kind {
		case xsoInpcb:
			if more, err := flush(); err != nil || !more {
				return err
			}
			if count++; count > limit {
				return fmt.Errorf("%w: more than %d sockets", ErrTableTooLarge, limit)
			}
			s, err := parseInpcb(blk)
			if err != nil {
				return fmt.Errorf("pcblist: socket %d: %w", count, err)
			}
			cur, open, sock, tcpc = s, true, false, false
		case xsoSocket:
			if !open || len(blk) < xsocketMin {
				return fmt.Errorf("pcblist: socket %d: a socket block of %d bytes, or out of place", count, n)
			}
			cur.UID = int(le.Uint32(blk[xsocketUID:]))
			if pid := int32(le.Uint32(blk[xsocketLastPID:])); pid > 0 {
				cur.Inode = uint64(pid)
			}
			sock = true
		case xsoTcpcb:
			if !open || len(blk) < xtcpcbMin {
				return fmt.Errorf("pcblist: socket %d: a TCP block of %d bytes, or out of place", count, n)
			}
			st := le.Uint32(blk[xtcpcbState:])
			if st >= uint32(len(darwinStates)) {
				return fmt.Errorf("pcblist: socket %d: TCP state %d", count, st)
			}
			cur.State = darwinStates[st]
			tcpc = true
		}
		off += (n + 7) &^ 7
		if off > len(b) {
			return errors.New("pcblist: cut short (no trailer)")
		}
	}
}

// parseInpcb reads the addresses and ports of one xinpcb_n block.
func parseInpcb(blk []byte) (Socket, error) {
	if len(blk) < inpcbMin {
		return Socket{}, fmt.Errorf("an inpcb block of %d bytes", len(blk))
	}
	vflag := blk[inpcbVflag]
	addr := func(at int) netip.Addr {
		if vflag&inpIPv6 != 0 {
			return netip.AddrFrom16([16]byte(blk[at : at+16])).Unmap()
		}
		return netip.AddrFrom4([4]byte(blk[at+12 : at+16]))
	}
	if vflag&(inpIPv4|inpIPv6) == 0 {
		return Socket{}, fmt.Errorf("an inpcb of neither IPv4 nor IPv6 (vflag %#x)", vflag)
	}
	be := binary.BigEndian // ports in network order
	return Socket{
		Local:  netip.AddrPortFrom(addr(inpcbLaddr), be.Uint16(blk[inpcbLport:])),
		Remote: netip.AddrPortFrom(addr(inpcbFaddr), be.Uint16(blk[inpcbFport:])),
		// An IPv6 socket takes IPv4 too unless IPV6_V6ONLY, which xnu
		// shows by leaving INP_IPV4 unset.
		V6Only: vflag&inpIPv6 != 0 && vflag&inpIPv4 == 0,
		Device: DeviceUnknown, // inp_boundifp is not in the reply
	}, nil
}
