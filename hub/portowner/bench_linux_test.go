package portowner

import (
	"context"
	"net"
	"net/netip"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// loadTable opens up to n loopback connections, both ends held here (so
// 2n sockets in the table), within this process's descriptor limit, and
// closes them when b ends: the server sides first, so the TIME_WAIT
// sockets left behind sit on the listener's port, not on ephemeral ports
// other programs want. It returns the listener and one connection to it.
func loadTable(b *testing.B, n int) (net.Listener, net.Conn) {
	b.Helper()
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err == nil && uint64(2*n+256) > lim.Cur {
		n = int(lim.Cur-256) / 2
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	servers := make(chan []net.Conn, 1)
	go func() {
		var ss []net.Conn
		for range n {
			s, err := l.Accept()
			if err != nil {
				break
			}
			ss = append(ss, s)
		}
		servers <- ss
	}()
	clients := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp4", l.Addr().String())
		if err != nil {
			b.Logf("stopped at %d connections: %v", len(clients), err)
			l.Close()
			break
		}
		clients = append(clients, c)
	}
	ss := <-servers
	b.Cleanup(func() {
		for _, s := range ss {
			s.Close()
		}
		for _, c := range clients {
			c.Close()
		}
		l.Close()
	})
	if len(clients) == 0 {
		b.Fatal("no connection")
	}
	return l, clients[0]
}

// BenchmarkBackends is Peer and Listener from each backend on a table
// with many sockets: 20,000 of this process's (10,000 connections, fewer
// if the descriptor limit is lower) besides the machine's own. Peer is the
// check the OpenCode client makes before each new connection carries a
// byte; Listener is the port walk's look at a taken port.
func BenchmarkBackends(b *testing.B) {
	needNetlink(b)
	l, c := loadTable(b, 10000)
	rows := 0
	if err := scanTables(func(Socket) bool { rows++; return true }); err != nil {
		b.Skip(err)
	}
	b.Logf("%d rows in /proc/net/tcp{,6}", rows)
	addrs := func(c net.Conn) (local, remote netip.AddrPort) {
		return unmapped(c.LocalAddr().(*net.TCPAddr).AddrPort()), unmapped(c.RemoteAddr().(*net.TCPAddr).AddrPort())
	}
	la, ra := addrs(c)
	port := l.Addr().(*net.TCPAddr).Port
	// A connection to a TCP_DEFER_ACCEPT listener (OpenCode's): a request
	// socket, whose owner sock_diag finds by a second look, at its
	// listener.
	lc := net.ListenConfig{Control: control(syscall.IPPROTO_TCP, syscall.TCP_DEFER_ACCEPT, 30)}
	dl, err := lc.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer dl.Close()
	dc, err := net.Dial("tcp4", dl.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer dc.Close()
	dla, dra := addrs(dc)
	// A connection its listener has not accepted (a busy server): found,
	// like a request socket, by a second look at its listener.
	ql, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ql.Close()
	qc, err := net.Dial("tcp4", ql.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer qc.Close()
	qla, qra := addrs(qc)
	for _, be := range backends {
		b.Run("Peer/"+be.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if o, err := peer(be.src, la, ra); err != nil || !o.Mine() {
					b.Fatal(o, err)
				}
			}
			b.ReportMetric(float64(rows), "rows")
		})
		b.Run("PeerDeferAccept/"+be.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if o, err := peer(be.src, dla, dra); err != nil || !o.Mine() || o.Inode == 0 {
					b.Fatal(o, err)
				}
			}
			b.ReportMetric(float64(rows), "rows")
		})
		b.Run("PeerNotAccepted/"+be.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if o, err := peer(be.src, qla, qra); err != nil || !o.Mine() {
					b.Fatal(o, err)
				}
			}
			b.ReportMetric(float64(rows), "rows")
		})
		b.Run("Listener/"+be.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if o, err := listener(be.src, netip.MustParseAddr("127.0.0.1"), port); err != nil || !o.Mine() {
					b.Fatal(o, err)
				}
			}
			b.ReportMetric(float64(rows), "rows")
		})
	}
}
