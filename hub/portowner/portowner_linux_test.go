package portowner

import (
	"context"
	"net"
	"syscall"
	"testing"
)

// TestPeerDeferAccept: a server using TCP_DEFER_ACCEPT (Bun, so OpenCode)
// keeps our connection a request socket until our first byte arrives; the
// table gives it its listener's uid, so it is known before we write,
// whatever our uid (root's own included).
func TestPeerDeferAccept(t *testing.T) {
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_DEFER_ACCEPT, 5)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	l, err := lc.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o, err := Peer(context.Background(), c)
	if err != nil || !o.Mine() {
		t.Fatalf("peer = %+v %v, want ours", o, err)
	}
}
