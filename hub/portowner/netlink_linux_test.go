package portowner

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hubdev/hub/hub/portowner/portownertest"
)

// backends are Linux's two sources of answers, each on its own (no
// fallback), for the tests that compare them.
var backends = []struct {
	name string
	src  source
}{
	{"proc", tableSource(scanTables)},
	{"netlink", netlinkSource{}},
}

// needNetlink skips a test where sock_diag cannot answer (a sandbox).
func needNetlink(t testing.TB) {
	t.Helper()
	if err := (netlinkSource{}).listeners(1, func(Socket) bool { return true }); err != nil {
		t.Skipf("no sock_diag here: %v", err)
	}
}

func TestDiagConstants(t *testing.T) {
	for _, c := range []struct {
		name      string
		ours, sys int
	}{
		{"NLMSG_ERROR", nlmsgError, unix.NLMSG_ERROR},
		{"NLMSG_DONE", nlmsgDone, unix.NLMSG_DONE},
		{"NLM_F_REQUEST", nlmFRequest, unix.NLM_F_REQUEST},
		{"NLM_F_MULTI", nlmFMulti, unix.NLM_F_MULTI},
		{"NLM_F_DUMP", nlmFDump, unix.NLM_F_DUMP},
		{"NLM_F_DUMP_INTR", nlmFDumpIntr, unix.NLM_F_DUMP_INTR},
		{"SizeofNlMsghdr", nlmsgHdrLen, unix.SizeofNlMsghdr},
		{"SOCK_DIAG_BY_FAMILY", sockDiagByFamily, unix.SOCK_DIAG_BY_FAMILY},
		{"AF_INET", afInet, unix.AF_INET},
		{"AF_INET6", afInet6, unix.AF_INET6},
		{"IPPROTO_TCP", ipprotoTCP, unix.IPPROTO_TCP},
		{"TCP_NEW_SYN_RECV", stateNewSynRecv, unix.BPF_TCP_NEW_SYN_RECV},
	} {
		if c.ours != c.sys {
			t.Errorf("%s = %d, want %d", c.name, c.ours, c.sys)
		}
	}
}

// answer is what one backend says of a scenario.
type answer struct {
	listener    Owner
	listenerErr error
	peer        Owner
	peerErr     error
}

func ask(t *testing.T, src source, addr netip.Addr, port int, c net.Conn) answer {
	t.Helper()
	var a answer
	a.listener, a.listenerErr = listener(src, addr, port)
	la, ra := c.LocalAddr().(*net.TCPAddr), c.RemoteAddr().(*net.TCPAddr)
	a.peer, a.peerErr = peer(src, unmapped(la.AddrPort()), unmapped(ra.AddrPort()))
	return a
}

// agree asks every backend and requires the same answer of each, and
// the owner uid want of both the listener and the peer. It returns the
// answer.
func agree(t *testing.T, addr netip.Addr, port int, c net.Conn, want int) answer {
	t.Helper()
	var first answer
	for i, b := range backends {
		a := ask(t, b.src, addr, port, c)
		if a.listenerErr != nil || a.listener.UID != want || a.listener.Inode == 0 {
			t.Errorf("%s: listener %v:%d = %+v %v, want uid %d", b.name, addr, port, a.listener, a.listenerErr, want)
		}
		if a.peerErr != nil || a.peer.UID != want {
			t.Errorf("%s: peer of %v = %+v %v, want uid %d", b.name, c.LocalAddr(), a.peer, a.peerErr, want)
		}
		if i == 0 {
			first = a
		} else if a != first {
			t.Errorf("%s says %+v, %s %+v", b.name, a, backends[0].name, first)
		}
	}
	return first
}

// dialAccepted dials host on l's port and returns our side once l's
// holder accepted it.
func dialAccepted(t *testing.T, l net.Listener, network, host string) net.Conn {
	t.Helper()
	accepted := make(chan net.Conn, 1)
	go func() {
		s, err := l.Accept()
		if err != nil {
			s = nil
		}
		accepted <- s
	}()
	c, err := net.Dial(network, net.JoinHostPort(host, strconv.Itoa(portOf(l.Addr()))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if s := <-accepted; s != nil {
		t.Cleanup(func() { s.Close() })
	}
	return c
}

func listen(t *testing.T, lc net.ListenConfig, network, addr string) net.Listener {
	t.Helper()
	l, err := lc.Listen(context.Background(), network, addr)
	if err != nil {
		t.Skipf("%s %s: %v", network, addr, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func control(level, opt, value int) func(_, _ string, rc syscall.RawConn) error {
	return func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), level, opt, value) }); err != nil {
			return err
		}
		return serr
	}
}

func portOf(a net.Addr) int { return a.(*net.TCPAddr).Port }

// TestBackendsAgreeOwn: for this user's listeners and the connections
// they accepted, sock_diag and /proc name the same owner and inode.
func TestBackendsAgreeOwn(t *testing.T) {
	needNetlink(t)
	me := os.Getuid()
	for _, tc := range []struct {
		name, network, bind, dial, ask string
	}{ // dial the address ask
		{"ipv4", "tcp4", "127.0.0.1:0", "tcp4", "127.0.0.1"},
		{"ipv4 wildcard", "tcp4", "0.0.0.0:0", "tcp4", "127.0.0.1"},
		{"ipv6", "tcp6", "[::1]:0", "tcp6", "::1"},
		{"dual stack, ipv4 connection", "tcp", "[::]:0", "tcp4", "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := listen(t, net.ListenConfig{}, tc.network, tc.bind)
			port := portOf(l.Addr())
			c := dialAccepted(t, l, tc.dial, tc.ask)
			if a := agree(t, netip.MustParseAddr(tc.ask), port, c, me); a.peer.Inode == 0 {
				t.Errorf("peer %+v: no inode, though accepted", a.peer)
			}
		})
	}
}

// TestBackendsAgreeDeferAccept: our connection to a TCP_DEFER_ACCEPT
// listener is a request socket until our first byte. sock_diag writes
// uid 0 for every request socket, which for root would pass as its own:
// its owner is its listener's instead, from either backend.
func TestBackendsAgreeDeferAccept(t *testing.T) {
	needNetlink(t)
	l := listen(t, net.ListenConfig{Control: control(syscall.IPPROTO_TCP, syscall.TCP_DEFER_ACCEPT, 5)}, "tcp4", "127.0.0.1:0")
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := agree(t, netip.MustParseAddr("127.0.0.1"), portOf(l.Addr()), c, os.Getuid())
	if a.peer.Inode != a.listener.Inode {
		t.Errorf("peer %+v, want its listener's (%+v)", a.peer, a.listener)
	}
	unaccepted(t, c)
}

// TestBackendsAgreeAnotherUser: a listener of the user nobody, and the
// server side of a connection to it, are nobody's from either backend:
// accepted, still a request socket behind TCP_DEFER_ACCEPT (the case
// where sock_diag's own uid, 0, would make root take nobody's socket for
// its own), and left in the queue of a listener that never accepts.
func TestBackendsAgreeAnotherUser(t *testing.T) {
	needNetlink(t)
	for _, tc := range []struct {
		name string
		bind string
		o    portownertest.Options
	}{
		{"accepted", "127.0.0.1:0", portownertest.Options{}},
		{"dual stack", "[::]:0", portownertest.Options{}},
		{"deferred accept", "127.0.0.1:0", portownertest.Options{DeferAccept: true}},
		{"never accepted", "127.0.0.1:0", portownertest.Options{NoAccept: true}},
		{"never accepted, dual stack", "[::]:0", portownertest.Options{NoAccept: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sq := portownertest.StartWith(t, tc.bind, tc.o)
			c, err := net.Dial("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(sq.Port)))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tc.o == (portownertest.Options{}) {
				roundTrip(t, c) // the squatter has accepted c, not only the kernel
			}
			agree(t, netip.MustParseAddr("127.0.0.1"), sq.Port, c, sq.UID)
			// And through the public functions, fallback and all.
			if o, err := Peer(context.Background(), c); err != nil || o.UID != sq.UID || o.Mine() {
				t.Errorf("Peer = %+v %v, want uid %d", o, err, sq.UID)
			}
		})
	}
}

// roundTrip makes one HTTP request on c and reads its answer: the server
// has accepted c once it answers. Without it the two backends could ask
// either side of the other process's accept on a loaded machine, one
// seeing the connection still queued (its listener's inode) and the other
// accepted (its own).
func roundTrip(t *testing.T, c net.Conn) {
	t.Helper()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

// unaccepted fails t unless the server side of c is still waiting to be
// accepted (no inode), in both backends' tables: what Peer answered, it
// answered without an accept.
func unaccepted(t *testing.T, c net.Conn) {
	t.Helper()
	la, ra := unmapped(c.LocalAddr().(*net.TCPAddr).AddrPort()), unmapped(c.RemoteAddr().(*net.TCPAddr).AddrPort())
	for _, b := range backends {
		if s, found, err := b.src.conn(ra, la); err != nil || !found || s.Inode != 0 {
			t.Errorf("%s: server side %+v %v %v, want one not accepted yet", b.name, s, found, err)
		}
	}
}

// TestBackendsAgreeNotAccepted: the server side of a connection to our
// own listener, which has not accepted it (a server busy or slow on a
// loaded machine), is ours from either backend, at once: its listener's
// uid and inode. As root the table gives it uid 0 and no inode, like a
// socket of no one's; it was once waited for, up to a quarter second,
// then refused.
func TestBackendsAgreeNotAccepted(t *testing.T) {
	needNetlink(t)
	me := os.Getuid()
	lo := bindTo("lo")
	for _, tc := range []struct {
		name, network, bind, dial, ask string
		lc                             net.ListenConfig
	}{
		{"ipv4", "tcp4", "127.0.0.1:0", "tcp4", "127.0.0.1", net.ListenConfig{}},
		{"ipv4 wildcard", "tcp4", "0.0.0.0:0", "tcp4", "127.0.0.1", net.ListenConfig{}},
		{"ipv6", "tcp6", "[::1]:0", "tcp6", "::1", net.ListenConfig{}},
		{"dual stack, ipv4 connection", "tcp", "[::]:0", "tcp4", "127.0.0.1", net.ListenConfig{}},
		{"bound to the loopback device", "tcp4", "127.0.0.1:0", "tcp4", "127.0.0.1", lo},
		{"ipv6, bound to the loopback device", "tcp6", "[::1]:0", "tcp6", "::1", lo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := listen(t, tc.lc, tc.network, tc.bind)
			port := portOf(l.Addr())
			c, err := net.Dial(tc.dial, net.JoinHostPort(tc.ask, strconv.Itoa(port)))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			a := agree(t, netip.MustParseAddr(tc.ask), port, c, me)
			if a.peer.Inode != a.listener.Inode {
				t.Errorf("peer %+v, want its listener's (%+v)", a.peer, a.listener)
			}
			if o, err := Peer(context.Background(), c); err != nil || !o.Mine() {
				t.Errorf("Peer = %+v %v, want ours", o, err)
			}
			unaccepted(t, c)
		})
	}
}

// otherDevice names a network device other than loopback, skipping t
// where there is none.
func otherDevice(t *testing.T) string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Skip(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			return i.Name
		}
	}
	t.Skip("no network device besides loopback")
	return ""
}

// bindTo is a ListenConfig binding its listener to the device dev.
func bindTo(dev string) net.ListenConfig {
	return net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = unix.BindToDevice(int(fd), dev) }); err != nil {
			return err
		}
		return serr
	}}
}

// TestPeerNotAcceptedDevices: two users may listen on one address and
// port when each binds a different device (SO_BINDTODEVICE, which any
// user may set). A loopback connection waits in the queue of the one on
// the loopback device; sock_diag shows each socket's device, so that one
// is named, ours or nobody's, though neither has accepted. /proc shows no
// devices: there both could hold it, and it is refused (ErrAmbiguous).
func TestPeerNotAcceptedDevices(t *testing.T) {
	needNetlink(t)
	dev := otherDevice(t)
	for _, tc := range []struct {
		name string
		ours bool // the listener on lo is ours; nobody's is on dev
	}{{"ours on lo, nobody's on " + dev, true}, {"nobody's on lo, ours on " + dev, false}} {
		t.Run(tc.name, func(t *testing.T) {
			sqDev, ourDev := "lo", dev
			if tc.ours {
				sqDev, ourDev = dev, "lo"
			}
			sq := portownertest.StartWith(t, "127.0.0.1:0", portownertest.Options{Device: sqDev, NoAccept: true})
			listen(t, bindTo(ourDev), "tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(sq.Port)))
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sq.Port))
			c, err := net.Dial("tcp4", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			want := sq.UID
			if tc.ours {
				want = os.Getuid()
			}
			a := ask(t, netlinkSource{}, netip.MustParseAddr("127.0.0.1"), sq.Port, c)
			if a.peerErr != nil || a.peer.UID != want {
				t.Errorf("netlink: peer %+v %v, want uid %d", a.peer, a.peerErr, want)
			}
			if a := ask(t, tableSource(scanTables), netip.MustParseAddr("127.0.0.1"), sq.Port, c); !errors.Is(a.peerErr, ErrAmbiguous) {
				t.Errorf("proc: peer %+v %v, want ErrAmbiguous", a.peer, a.peerErr)
			}
			unaccepted(t, c)
			dc, err := (&Dialer{Source: "the file f"}).DialContext(context.Background(), "tcp4", addr)
			if tc.ours {
				if err != nil {
					t.Fatalf("Dialer: %v, want the connection", err)
				}
				dc.Close()
				return
			}
			sq.Refused(t, err, "the file f")
			sq.Untouched(t)
		})
	}
}

// TestBackendsAgreeBoundToDevice: a listener bound to the loopback device
// (SO_BINDTODEVICE, which any user may set on an unbound socket) hands
// its connections the binding; sock_diag finds them only when asked on
// that interface, and does.
func TestBackendsAgreeBoundToDevice(t *testing.T) {
	needNetlink(t)
	l := listen(t, bindTo("lo"), "tcp4", "127.0.0.1:0")
	c := dialAccepted(t, l, "tcp4", "127.0.0.1")
	agree(t, netip.MustParseAddr("127.0.0.1"), portOf(l.Addr()), c, os.Getuid())
}

// TestNetlinkNotTheListener: asked for a connection that does not exist
// on a port with a listener, the kernel's lookup answers with the
// listener; that is no server side of anything, so it is not found.
func TestNetlinkNotTheListener(t *testing.T) {
	needNetlink(t)
	l := listen(t, net.ListenConfig{}, "tcp4", "127.0.0.1:0")
	local := netip.MustParseAddrPort(l.Addr().String())
	for _, b := range backends {
		s, found, err := b.src.conn(local, netip.MustParseAddrPort("127.0.0.1:1"))
		if err != nil || found {
			t.Errorf("%s: %+v %v %v, want not found", b.name, s, found, err)
		}
	}
	d, err := openDiag()
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	var raw []Socket
	err = d.roundTrip(nlmFRequest, afInet, 0, local, netip.MustParseAddrPort("127.0.0.1:1"), 1, func(s Socket) { raw = append(raw, s) })
	if err != nil || len(raw) != 1 || raw[0].State != StateListen {
		t.Logf("the kernel no longer answers with the listener: %+v %v", raw, err)
	}
	// With no listener either, the kernel answers ENOENT, which is
	// "not found" once a dump shows sock_diag is there.
	l.Close()
	for _, b := range backends {
		s, found, err := b.src.conn(local, netip.MustParseAddrPort("127.0.0.1:1"))
		if err != nil || found {
			t.Errorf("%s, no listener: %+v %v %v, want not found", b.name, s, found, err)
		}
	}
}

// TestNetlinkV6Only: sock_diag shows IPV6_V6ONLY, so an IPv6-only
// wildcard listener is not taken for the holder of an IPv4 port; /proc
// cannot tell, and says it might be.
func TestNetlinkV6Only(t *testing.T) {
	needNetlink(t)
	l := listen(t, net.ListenConfig{Control: control(syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 1)}, "tcp6", "[::]:0")
	port := portOf(l.Addr())
	v4, v6 := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")
	if _, err := listener(netlinkSource{}, v4, port); !errors.Is(err, ErrNotFound) {
		t.Errorf("netlink: IPv4 port held by an IPv6-only listener: %v", err)
	}
	if o, err := listener(netlinkSource{}, v6, port); err != nil || !o.Mine() {
		t.Errorf("netlink: IPv6 port = %+v %v", o, err)
	}
	if o, err := listener(tableSource(scanTables), v4, port); err != nil || !o.Mine() {
		t.Errorf("proc: IPv4 port = %+v %v, want the IPv6 wildcard (it cannot tell)", o, err)
	}
}

// TestNetlinkLimit: more sockets than a reply may hold fail it rather
// than cut it short.
func TestNetlinkLimit(t *testing.T) {
	needNetlink(t)
	listen(t, net.ListenConfig{}, "tcp4", "127.0.0.1:0")
	d, err := openDiag()
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	n := 0
	err = d.roundTrip(nlmFRequest|nlmFDump, afInet, 1<<StateListen, netip.AddrPort{}, netip.AddrPort{}, 0, func(Socket) { n++ })
	if !errors.Is(err, ErrTableTooLarge) || n != 0 {
		t.Fatalf("%d sockets at limit 0: %v", n, err)
	}
	// The socket is left mid-reply, and says so rather than answer the
	// next request with the rest of the last.
	if err := d.roundTrip(nlmFRequest|nlmFDump, afInet, 0, netip.AddrPort{}, netip.AddrPort{}, 0, nil); err == nil {
		t.Fatal("a socket left mid-reply answered again")
	}
}
