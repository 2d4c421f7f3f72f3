package portowner

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"
)

// netlinkSource asks the kernel about the very sockets a question names,
// through NETLINK_SOCK_DIAG (what ss uses): one connection by its
// addresses, which the kernel finds with a hash lookup, or the listeners
// on one port. /proc/net/tcp instead makes the kernel write a line for
// every socket of the namespace, tens of thousands on a busy machine, on
// every look. Each question opens its own netlink socket, so a
// netlinkSource holds nothing and is safe for concurrent use.
type netlinkSource struct{}

const (
	// maxReplies bounds the sockets one dump may return. A dump asks
	// for the listeners on one port, a handful, but every local user
	// can add some: past the bound the answer is an error, never a
	// partial list.
	maxReplies = 1 << 16
	// dumpBuf holds one datagram of a dump's replies: the kernel fills
	// them up to 32 KiB less its own overhead, whatever larger buffer it
	// is offered. lookupBuf holds the one reply to a lookup, under 1 KiB
	// with the attributes the kernel adds unasked. A larger datagram is
	// an error (MSG_TRUNC), not a partial answer.
	dumpBuf   = 32 << 10
	lookupBuf = 8 << 10
	// diagTimeout bounds each wait for the kernel's next datagram.
	diagTimeout = time.Second
	// loopbackIndex is the loopback interface's index in every network
	// namespace (LOOPBACK_IFINDEX). A connection between two sockets of
	// this host goes through it, so an exact lookup names it: the kernel
	// then also finds a socket bound to the loopback device
	// (SO_BINDTODEVICE, which any user may set), which a lookup without
	// an interface misses.
	loopbackIndex = 1
)

func (netlinkSource) listeners(port uint16, visit func(Socket) bool) error {
	d, err := openDiag()
	if err != nil {
		return err
	}
	defer d.close()
	return d.listeners(port, visit)
}

func (netlinkSource) conn(local, remote netip.AddrPort) (Socket, bool, error) {
	d, err := openDiag()
	if err != nil {
		return Socket{}, false, err
	}
	defer d.close()
	return d.conn(local, remote)
}

// diagSocket is one netlink socket to the kernel's sock_diag, for the
// questions of one netlinkSource call.
type diagSocket struct {
	fd  int
	seq uint32
	buf []byte
	// broken: a reply was not read to its end, so what comes next on
	// the socket belongs to no new request.
	broken bool
}

func openDiag() (*diagSocket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag: %w", err)
	}
	tv := unix.NsecToTimeval(diagTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sock_diag: receive timeout: %w", err)
	}
	// Connected to the kernel (port id 0), the socket takes datagrams
	// from nobody else.
	if err := unix.Connect(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sock_diag: connect: %w", err)
	}
	return &diagSocket{fd: fd, buf: make([]byte, lookupBuf)}, nil
}

func (d *diagSocket) close() { unix.Close(d.fd) }

// listeners dumps the listening sockets on port, IPv4 then IPv6; the
// kernel compares the port itself. Nothing is visited unless both dumps
// complete, so a failure can be answered from elsewhere without doubles.
func (d *diagSocket) listeners(port uint16, visit func(Socket) bool) error {
	var found []Socket
	for _, family := range []uint8{afInet, afInet6} {
		err := d.roundTrip(nlmFRequest|nlmFDump, family, 1<<StateListen, netip.AddrPortFrom(netip.Addr{}, port), netip.AddrPort{},
			maxReplies-len(found), func(s Socket) { found = append(found, s) })
		if family == afInet6 && errors.Is(err, unix.ENOENT) {
			continue // a kernel without IPv6
		}
		if err != nil {
			return err
		}
	}
	for _, s := range found {
		if !visit(s) {
			break
		}
	}
	return nil
}

// conn looks up the socket whose own address is local and whose peer is
// remote. sock_diag writes uid 0 for a request socket (/proc writes its
// listener's): peer looks its listener up, as for any socket not
// accepted yet.
func (d *diagSocket) conn(local, remote netip.AddrPort) (Socket, bool, error) {
	family := uint8(afInet)
	if !local.Addr().Is4() || !remote.Addr().Is4() {
		family = afInet6
	}
	var s Socket
	found := false
	// The kernel does not compare a lookup's states (as of 6.18); these
	// are the ones wanted, should one ever do.
	err := d.roundTrip(nlmFRequest, family, 1<<StateEstablished|1<<StateSynRecv|1<<stateNewSynRecv, local, remote, 1,
		func(r Socket) { s, found = r, true })
	if errors.Is(err, unix.ENOENT) {
		// No such socket, or no TCP sock_diag in this kernel, which
		// answers the same: a dump of nothing (no states) tells them
		// apart.
		if err := d.roundTrip(nlmFRequest|nlmFDump, family, 0, netip.AddrPort{}, netip.AddrPort{}, 0, nil); err != nil {
			return Socket{}, false, fmt.Errorf("sock_diag cannot look sockets up: %w", err)
		}
		return Socket{}, false, nil
	}
	if err != nil {
		return Socket{}, false, err
	}
	// Where no connection matches, the kernel's lookup answers with the
	// listener a new one would reach; TIME_WAIT and closing sockets are
	// no server side to write to.
	if !found || s.Local != local || s.Remote != remote || (s.State != StateEstablished && s.State != StateSynRecv) {
		return Socket{}, false, nil
	}
	return s, true, nil
}

// roundTrip sends one request and reads its replies to the end, calling
// visit for each socket. More than limit sockets is ErrTableTooLarge.
func (d *diagSocket) roundTrip(flags uint16, family uint8, states uint32, local, remote netip.AddrPort, limit int, visit func(Socket)) error {
	if d.broken {
		return errors.New("sock_diag: the socket is left mid-reply")
	}
	d.broken = true
	d.seq++
	var ifindex uint32
	if flags&nlmFDump == 0 {
		ifindex = loopbackIndex
	} else if len(d.buf) < dumpBuf {
		d.buf = make([]byte, dumpBuf)
	}
	req := diagRequest(d.seq, flags, family, states, ifindex, local, remote)
	for {
		err := unix.Send(d.fd, req, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("sock_diag: send: %w", err)
		}
		break
	}
	total, over := 0, false
	count := func(s Socket) bool {
		if total++; total > limit {
			over = true
			return false
		}
		visit(s)
		return true
	}
	// Each datagram holds at least one message, so a reply within the
	// limit takes at most limit+1 datagrams (the last says done); the
	// rest of the budget is for interrupted waits.
	for reads := 0; reads <= limit+64; reads++ {
		n, _, rflags, from, err := unix.Recvmsg(d.fd, d.buf, nil, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return fmt.Errorf("sock_diag: no reply from the kernel within %v", diagTimeout)
		case err != nil:
			return fmt.Errorf("sock_diag: receive: %w", err)
		case rflags&unix.MSG_TRUNC != 0:
			return fmt.Errorf("sock_diag: a reply longer than %d bytes", len(d.buf))
		}
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
			return fmt.Errorf("sock_diag: a datagram not from the kernel (%v)", from)
		}
		_, done, err := parseDiag(d.buf[:n], d.seq, count)
		if done {
			d.broken = false // the kernel said all it had to, an error included
		}
		switch {
		case over:
			return fmt.Errorf("%w: more than %d sockets", ErrTableTooLarge, limit)
		case err != nil:
			return err
		case done:
			return nil
		}
	}
	return fmt.Errorf("sock_diag: no end to the reply after %d datagrams", limit+64)
}
