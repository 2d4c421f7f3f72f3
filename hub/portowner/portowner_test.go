package portowner

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/hubdev/hub/hub/portowner/portownertest"
)

func TestMain(m *testing.M) {
	portownertest.Main()
	os.Exit(m.Run())
}

func needTable(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		if _, err := Listener(netip.Addr{}, 1); !errors.Is(err, ErrUnknown) {
			t.Fatalf("%s: %v, want ErrUnknown", runtime.GOOS, err)
		}
		t.Skipf("no socket table reader on %s yet", runtime.GOOS)
	}
}

// TestOwnListener: a listener of this process is ours, named by pid.
func TestOwnListener(t *testing.T) {
	needTable(t)
	for _, tc := range []struct{ network, bind, ask string }{
		{"tcp4", "127.0.0.1:0", "127.0.0.1"},
		{"tcp4", "0.0.0.0:0", "127.0.0.1"},
		{"tcp6", "[::1]:0", "::1"},
		{"tcp", "[::]:0", "127.0.0.1"}, // dual stack
	} {
		l, err := net.Listen(tc.network, tc.bind)
		if err != nil {
			t.Logf("%s %s: %v (skipped)", tc.network, tc.bind, err)
			continue
		}
		port := l.Addr().(*net.TCPAddr).Port
		o, err := Listener(netip.MustParseAddr(tc.ask), port)
		if err != nil || !o.Mine() || o.Inode == 0 {
			t.Errorf("%s: %+v %v, want ours", tc.bind, o, err)
		}
		if r := Resolve(o); r.PID != os.Getpid() || r.Command == "" || r.String() == "" {
			t.Errorf("%s: resolved %+v, want pid %d", tc.bind, r, os.Getpid())
		}
		l.Close()
		if _, err := Listener(netip.MustParseAddr(tc.ask), port); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: closed listener still found: %v", tc.bind, err)
		}
	}
}

// TestOwnPeer: the far end of a connection to our own listener is ours,
// over IPv4 and IPv6.
func TestOwnPeer(t *testing.T) {
	needTable(t)
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s: %v (skipped)", addr, err)
			continue
		}
		accepted := make(chan net.Conn, 1)
		go func() {
			s, _ := l.Accept()
			accepted <- s
		}()
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		o, err := Peer(context.Background(), c)
		if err != nil || !o.Mine() {
			t.Errorf("%s: %+v %v", addr, o, err)
		}
		if s := <-accepted; s != nil {
			s.Close()
		}
		c.Close()
		l.Close()
	}
}

// TestPeerNotAccepted: a connection our own listener has not accepted
// (a server slow to accept on a loaded machine) has a far end the table
// shows with no process, and as root with uid 0, like a socket of no
// one's: it is ours, its listener's, at once, without an accept. As root
// it was once waited for, up to a quarter second, and then refused.
func TestPeerNotAccepted(t *testing.T) {
	needTable(t)
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s: %v (skipped)", addr, err)
			continue
		}
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		o, err := Peer(context.Background(), c)
		lo, lerr := Listener(netip.Addr{}, l.Addr().(*net.TCPAddr).Port)
		if err != nil || !o.Mine() || lerr != nil || o.Inode != lo.Inode {
			t.Errorf("%s: %+v %v, want ours, the listener's (%+v %v)", addr, o, err, lo, lerr)
		}
		if r := Resolve(o); r.PID != os.Getpid() {
			t.Errorf("%s: resolved %+v, want this process, which holds the listener", addr, r)
		}
		c.Close()
		l.Close()
	}
}

// TestAnotherUsersPort: a listener of the user nobody is named as
// nobody's, both as the holder of the port and as the far end of a
// connection to it.
func TestAnotherUsersPort(t *testing.T) {
	needTable(t)
	sq := portownertest.Start(t, "127.0.0.1:0")
	o, err := Listener(netip.MustParseAddr("127.0.0.1"), sq.Port)
	if err != nil || o.UID != sq.UID || o.Mine() {
		t.Fatalf("listener owner = %+v %v, want uid %d", o, err, sq.UID)
	}
	r := Resolve(o)
	if r.User != "nobody" || r.PID == 0 {
		t.Errorf("resolved = %+v, want user nobody and (as root) its pid", r)
	}
	t.Logf("held by %s", r)

	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(sq.Port)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := Peer(context.Background(), c)
	if err != nil || p.UID != sq.UID || p.Mine() {
		t.Fatalf("peer owner = %+v %v, want uid %d", p, err, sq.UID)
	}
}
