package portowner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// The messages of Linux's sock_diag netlink protocol for TCP sockets
// (linux/netlink.h, linux/sock_diag.h, linux/inet_diag.h). Building and
// parsing them is portable, so it is tested and fuzzed everywhere; only
// netlink_linux.go sends them.
const (
	nlmsgHdrLen  = 16 // struct nlmsghdr
	nlmsgError   = 2  // NLMSG_ERROR
	nlmsgDone    = 3  // NLMSG_DONE
	nlmFRequest  = 0x1
	nlmFMulti    = 0x2
	nlmFDumpIntr = 0x10
	nlmFDump     = 0x300

	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
	afInet           = 2
	afInet6          = 10
	ipprotoTCP       = 6

	diagReqLen = 56 // struct inet_diag_req_v2
	diagMsgLen = 72 // struct inet_diag_msg

	// attrV6Only (INET_DIAG_SKV6ONLY) carries IPV6_V6ONLY of an IPv6
	// listener; every kernel with it sends it unasked.
	attrV6Only = 11

	// stateNewSynRecv is the kernel's state of a request socket
	// (TCP_NEW_SYN_RECV); the table shows it as StateSynRecv.
	stateNewSynRecv = 12
)

// noCookie (INET_DIAG_NOCOOKIE) in both words of a request's socket id
// asks the kernel to look the socket up by its addresses alone.
const noCookie = ^uint32(0)

// diagRequest builds one SOCK_DIAG_BY_FAMILY request for TCP sockets of
// family (afInet, afInet6): a dump (flags nlmFRequest|nlmFDump) of the
// sockets in states (a bit per state) whose own port is local's, any
// when 0; or, with flags nlmFRequest, the one socket whose own address is
// local and whose peer is remote, as a packet arriving on interface
// ifindex would find it (0: any socket not bound to an interface). IPv4
// addresses go as IPv4-mapped ones in an afInet6 request.
func diagRequest(seq uint32, flags uint16, family uint8, states, ifindex uint32, local, remote netip.AddrPort) []byte {
	b := make([]byte, nlmsgHdrLen+diagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], sockDiagByFamily)
	ne.PutUint16(b[6:], flags)
	ne.PutUint32(b[8:], seq)
	// b[12:16], the sender's port id, is 0: the kernel fills it in.
	r := b[nlmsgHdrLen:]
	r[0], r[1] = family, ipprotoTCP
	ne.PutUint32(r[4:], states)
	id := r[8:]
	binary.BigEndian.PutUint16(id[0:], local.Port())
	binary.BigEndian.PutUint16(id[2:], remote.Port())
	putAddr(id[4:20], family, local.Addr())
	putAddr(id[20:36], family, remote.Addr())
	ne.PutUint32(id[36:], ifindex)
	ne.PutUint32(id[40:], noCookie)
	ne.PutUint32(id[44:], noCookie)
	return b
}

// putAddr writes a in network order as the kernel's __be32[4] holds it;
// nothing for the invalid (zero) address, which a dump does not compare.
func putAddr(dst []byte, family uint8, a netip.Addr) {
	switch {
	case !a.IsValid():
	case family == afInet:
		a4 := a.Unmap().As4()
		copy(dst, a4[:])
	default:
		a16 := a.As16()
		copy(dst, a16[:])
	}
}

var (
	// errDumpInterrupted: the kernel's table changed under a dump, so it
	// may have missed a socket.
	errDumpInterrupted = errors.New("sock_diag: dump interrupted")
	// errStopped: visit asked parseDiag to stop before the reply ended.
	errStopped = errors.New("sock_diag: reading stopped")
)

// parseDiag parses one datagram of the kernel's replies to request seq
// and calls visit for each socket in it (errStopped when visit returns
// false). done is true once the reply is complete: NLMSG_DONE ends a
// dump, and a reply that is not part of one (no NLM_F_MULTI) is all there
// is. An error the kernel sends (NLMSG_ERROR, or NLMSG_DONE with a code)
// ends the reply too, and is returned as the Linux errno it carries (a
// syscall.Errno with Linux's numbering). A message that does not parse, or answers another request, fails the
// whole reply: skipping it could skip the socket a caller looks for.
func parseDiag(b []byte, seq uint32, visit func(Socket) bool) (n int, done bool, err error) {
	ne := binary.NativeEndian
	for len(b) > 0 {
		if len(b) < nlmsgHdrLen {
			return n, false, fmt.Errorf("sock_diag: %d trailing bytes", len(b))
		}
		size := ne.Uint32(b[0:])
		typ, flags, mseq := ne.Uint16(b[4:]), ne.Uint16(b[6:]), ne.Uint32(b[8:])
		if size < nlmsgHdrLen || size > uint32(len(b)) {
			return n, false, fmt.Errorf("sock_diag: message of %d bytes in %d", size, len(b))
		}
		if mseq != seq {
			return n, false, fmt.Errorf("sock_diag: reply to request %d, want %d", mseq, seq)
		}
		if flags&nlmFDumpIntr != 0 {
			return n, false, errDumpInterrupted
		}
		body := b[nlmsgHdrLen:size]
		switch typ {
		case nlmsgError:
			if len(body) < 4 {
				return n, false, errors.New("sock_diag: short error message")
			}
			code := int32(ne.Uint32(body))
			if code == 0 {
				return n, true, nil // an acknowledgement: nothing (more) to say
			}
			if code > 0 || code < -4095 {
				return n, false, fmt.Errorf("sock_diag: error code %d", code)
			}
			return n, true, syscall.Errno(-code)
		case nlmsgDone:
			if len(body) >= 4 {
				if code := int32(ne.Uint32(body)); code < 0 && code >= -4095 {
					return n, true, syscall.Errno(-code)
				} else if code != 0 {
					return n, false, fmt.Errorf("sock_diag: done with code %d", code)
				}
			}
			return n, true, nil
		case sockDiagByFamily:
			s, err := parseDiagMsg(body)
			if err != nil {
				return n, false, err
			}
			n++
			if !visit(s) {
				return n, false, errStopped
			}
			if flags&nlmFMulti == 0 {
				return n, true, nil
			}
		default:
			return n, false, fmt.Errorf("sock_diag: unexpected message type %d", typ)
		}
		// Messages are 4-byte aligned; the last may end unpadded.
		next := (size + 3) &^ 3
		if next > uint32(len(b)) {
			next = uint32(len(b))
		}
		b = b[next:]
	}
	return n, false, nil
}

// parseDiagMsg parses one struct inet_diag_msg and its attributes.
func parseDiagMsg(b []byte) (Socket, error) {
	if len(b) < diagMsgLen {
		return Socket{}, fmt.Errorf("sock_diag: socket message of %d bytes, want %d", len(b), diagMsgLen)
	}
	var s Socket
	family := b[0]
	s.State = b[1]
	if s.State == stateNewSynRecv { // the kernel writes StateSynRecv; be sure
		s.State = StateSynRecv
	}
	id := b[4:]
	sport, dport := binary.BigEndian.Uint16(id[0:]), binary.BigEndian.Uint16(id[2:])
	var src, dst netip.Addr
	switch family {
	case afInet:
		src, dst = netip.AddrFrom4([4]byte(id[4:8])), netip.AddrFrom4([4]byte(id[20:24]))
	case afInet6:
		src, dst = netip.AddrFrom16([16]byte(id[4:20])).Unmap(), netip.AddrFrom16([16]byte(id[20:36])).Unmap()
	default:
		return Socket{}, fmt.Errorf("sock_diag: address family %d", family)
	}
	s.Local, s.Remote = netip.AddrPortFrom(src, sport), netip.AddrPortFrom(dst, dport)
	ne := binary.NativeEndian
	// idiag_if: the device the socket is bound to, 0 for none; the
	// kernel's index is an int, never negative.
	dev := ne.Uint32(id[36:])
	if dev > 1<<31-1 {
		return Socket{}, fmt.Errorf("sock_diag: device index %d", dev)
	}
	s.Device = int(dev)
	s.UID = int(ne.Uint32(b[64:]))
	s.Inode = uint64(ne.Uint32(b[68:]))
	for attrs := b[diagMsgLen:]; len(attrs) > 0; {
		if len(attrs) < 4 {
			return Socket{}, errors.New("sock_diag: truncated attribute")
		}
		size, typ := ne.Uint16(attrs[0:]), ne.Uint16(attrs[2:])&^0xc000 // the nested and byte-order flags
		if size < 4 || int(size) > len(attrs) {
			return Socket{}, fmt.Errorf("sock_diag: attribute of %d bytes in %d", size, len(attrs))
		}
		if typ == attrV6Only && size >= 5 && family == afInet6 {
			s.V6Only = attrs[4] != 0
		}
		next := (int(size) + 3) &^ 3
		if next > len(attrs) {
			next = len(attrs)
		}
		attrs = attrs[next:]
	}
	return s, nil
}
