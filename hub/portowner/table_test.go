package portowner

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"testing"
)

// Recorded on x86-64 (Linux 6.18) with listeners on 127.0.0.1:4096,
// 0.0.0.0:8787, [::]:8788 (dual stack), [::1]:8789 and a connection to
// each of the last two; the uid and inode columns are then edited so that
// every socket is told apart: uid 1000 is "ours" in these tests, 65534
// another user's.
const tcp4 = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode                                                     
   0: 00000000:2253 00000000:0000 0A 00000000:00000000 00:00000000 00000000 65534        0 74160 1 000000007687c0c7 100 0 0 10 0                     
   1: 0100007F:1000 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 74159 1 000000000507d419 100 0 0 10 0                     
   3: 0100007F:AFF7 0100007F:DF00 06 00000000:00000000 03:000001EC 00000000     0        0 0 3 00000000da0586cb                                      
   4: 0100007F:CEBC 0100007F:2254 01 00000000:00000000 00:00000000 00000000  1000        0 74163 2 00000000760a0d1e 20 0 0 10 -1                     
`

const tcp6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:2254 00000000000000000000000000000000:0000 0A 00000000:00000001 00:00000000 00000000 65534        0 74161 2 00000000ecb0a8db 100 0 0 10 0
   1: 00000000000000000000000001000000:2255 00000000000000000000000000000000:0000 0A 00000000:00000001 00:00000000 00000000  1000        0 74162 2 00000000e01335ee 100 0 0 10 0
   2: 0000000000000000FFFF00000100007F:2254 0000000000000000FFFF00000100007F:CEBC 01 00000000:00000000 00:00000000 00000000 65534        0 0 1 0000000006e53e08 20 0 0 10 -1
   3: 00000000000000000000000001000000:2255 00000000000000000000000001000000:E1C8 01 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000072b10115 20 0 0 10 -1
   4: 00000000000000000000000001000000:E1C8 00000000000000000000000001000000:2255 01 00000000:00000000 00:00000000 00000000  1000        0 74164 2 0000000046895c43 20 0 0 10 -1
`

// recorded scans the two tables above, as scanTables scans the system's.
func recorded(tables ...string) scanner {
	return func(visit func(Socket) bool) error {
		more := true
		for _, tab := range tables {
			err := parseTable(strings.NewReader(tab), binary.LittleEndian, MaxRows, func(s Socket) bool {
				more = visit(s)
				return more
			})
			if err != nil || !more {
				return err
			}
		}
		return nil
	}
}

func TestParseRows(t *testing.T) {
	var got []Socket
	if err := recorded(tcp4, tcp6)(func(s Socket) bool { got = append(got, s); return true }); err != nil {
		t.Fatal(err)
	}
	ap := netip.MustParseAddrPort
	row := func(local, remote netip.AddrPort, state uint8, uid int, inode uint64) Socket {
		return Socket{Local: local, Remote: remote, State: state, UID: uid, Inode: inode, Device: DeviceUnknown}
	}
	want := []Socket{
		row(ap("0.0.0.0:8787"), ap("0.0.0.0:0"), StateListen, 65534, 74160),
		row(ap("127.0.0.1:4096"), ap("0.0.0.0:0"), StateListen, 1000, 74159),
		row(ap("127.0.0.1:45047"), ap("127.0.0.1:57088"), StateTimeWait, 0, 0),
		row(ap("127.0.0.1:52924"), ap("127.0.0.1:8788"), StateEstablished, 1000, 74163),
		row(ap("[::]:8788"), ap("[::]:0"), StateListen, 65534, 74161),
		row(ap("[::1]:8789"), ap("[::]:0"), StateListen, 1000, 74162),
		row(ap("127.0.0.1:8788"), ap("127.0.0.1:52924"), StateEstablished, 65534, 0), // IPv4-mapped, unmapped
		row(ap("[::1]:8789"), ap("[::1]:57800"), StateEstablished, 0, 0),
		row(ap("[::1]:57800"), ap("[::1]:8789"), StateEstablished, 1000, 74164),
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestParseBigEndian decodes the words as a big-endian kernel prints them.
func TestParseBigEndian(t *testing.T) {
	s, err := parseRow([]byte("0: 7F000001:1000 00000000:0000 0A 0:0 0:0 0 7 0 9"), false)
	if err != nil || s.Local != netip.MustParseAddrPort("127.0.0.1:4096") || s.UID != 7 || s.Inode != 9 {
		t.Fatalf("got %+v, %v", s, err)
	}
}

func TestParseRefuses(t *testing.T) {
	const head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	const row = "   0: 0100007F:1000 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 74159 1\n"
	for _, tc := range []struct {
		name, table string
	}{
		{"empty", ""},
		{"no header", row},
		{"short row", head + "   0: 0100007F:1000 00000000:0000 0A\n"},
		{"no colon in sl", head + strings.Replace(row, "0:", "0 ", 1)},
		{"odd address length", head + strings.Replace(row, "0100007F:1000", "100007F:1000", 1)},
		{"address not hex", head + strings.Replace(row, "0100007F", "0100007G", 1)},
		{"port too long", head + strings.Replace(row, "0100007F:1000", "0100007F:10000", 1)},
		{"port not hex", head + strings.Replace(row, "0100007F:1000", "0100007F:10x0", 1)},
		{"no port", head + strings.Replace(row, "0100007F:1000", "0100007F", 1)},
		{"state not hex", head + strings.Replace(row, " 0A ", " 0Z ", 1)},
		{"state too long", head + strings.Replace(row, " 0A ", " 00A ", 1)},
		{"negative uid", head + strings.Replace(row, "  1000 ", " -1000 ", 1)},
		{"uid beyond 32 bits", head + strings.Replace(row, "  1000 ", " 4294967296 ", 1)},
		{"inode not a number", head + strings.Replace(row, " 74159 ", " 7415x ", 1)},
		{"line too long", head + strings.Repeat("x", maxLine+1) + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			err := parseTable(strings.NewReader(tc.table), binary.LittleEndian, MaxRows, func(Socket) bool { n++; return true })
			if err == nil {
				t.Fatalf("accepted (%d rows)", n)
			}
		})
	}
}

func TestParseRowLimit(t *testing.T) {
	row := "   0: 0100007F:1000 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 74159 1\n"
	table := func(rows int) io.Reader {
		return io.MultiReader(strings.NewReader(strings.Split(tcp4, "\n")[0]+"\n"), strings.NewReader(strings.Repeat(row, rows)))
	}
	n := 0
	if err := parseTable(table(10), binary.LittleEndian, 10, func(Socket) bool { n++; return true }); err != nil || n != 10 {
		t.Fatalf("10 rows at limit 10: %d, %v", n, err)
	}
	n = 0
	err := parseTable(table(11), binary.LittleEndian, 10, func(Socket) bool { n++; return true })
	if !errors.Is(err, ErrTableTooLarge) || n != 10 {
		t.Fatalf("11 rows at limit 10: %d, %v", n, err)
	}
	// visit may stop early; that is no error.
	n = 0
	if err := parseTable(table(11), binary.LittleEndian, 10, func(Socket) bool { n++; return n < 3 }); err != nil || n != 3 {
		t.Fatalf("stopped at 3: %d, %v", n, err)
	}
}

func TestListenerMatches(t *testing.T) {
	scan := recorded(tcp4, tcp6)
	ip := netip.MustParseAddr
	for _, tc := range []struct {
		addr string
		port int
		uid  int // -1: not found
	}{
		{"127.0.0.1", 4096, 1000},
		{"127.0.0.1", 8787, 65534}, // 0.0.0.0
		{"127.0.0.1", 8788, 65534}, // :: (dual stack)
		{"::1", 8788, 65534},       // ::
		{"::1", 8789, 1000},
		{"127.0.0.1", 8789, -1}, // held on ::1 only
		{"::1", 8787, -1},       // 0.0.0.0 is IPv4 only
		{"::1", 4096, -1},
		{"::ffff:127.0.0.1", 4096, 1000},
		{"127.0.0.1", 45047, -1}, // TIME_WAIT is no listener
		{"", 8789, 1000},         // any address
	} {
		var a netip.Addr
		if tc.addr != "" {
			a = ip(tc.addr)
		}
		o, err := listener(tableSource(scan), a, tc.port)
		switch {
		case tc.uid < 0 && !errors.Is(err, ErrNotFound):
			t.Errorf("%s:%d: %+v %v, want ErrNotFound", tc.addr, tc.port, o, err)
		case tc.uid >= 0 && (err != nil || o.UID != tc.uid):
			t.Errorf("%s:%d: %+v %v, want uid %d", tc.addr, tc.port, o, err, tc.uid)
		}
	}
}

// TestListenerPrefersAnotherUser: with several sockets in the way, the
// one of another user is the one to name.
func TestListenerPrefersAnotherUser(t *testing.T) {
	me := os.Getuid()
	tab := fmt.Sprintf(`  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:2253 00000000:0000 0A 00000000:00000000 00:00000000 00000000 %d        0 1 1
   1: 00000000:2253 00000000:0000 0A 00000000:00000000 00:00000000 00000000 %d        0 2 1
`, me, me+1)
	o, err := listener(tableSource(recorded(tab)), netip.MustParseAddr("127.0.0.1"), 8787)
	if err != nil || o.UID != me+1 || o.Inode != 2 || o.Mine() {
		t.Fatalf("got %+v %v, want the other user's socket", o, err)
	}
}

func TestPeerMatches(t *testing.T) {
	ap := netip.MustParseAddrPort
	src := tableSource(recorded(tcp4, tcp6))
	// The connection 127.0.0.1:52924 -> 127.0.0.1:8788 reached the dual
	// stack listener: its server side is the IPv4-mapped row, uid 65534
	// (a kernel with sk_uid), not accepted yet (inode 0): the listener's,
	// [::]:8788, inode 74161.
	o, err := peer(src, ap("127.0.0.1:52924"), ap("127.0.0.1:8788"))
	if err != nil || o.UID != 65534 || o.Inode != 74161 {
		t.Fatalf("v4 peer = %+v %v, want uid 65534, the listener's inode", o, err)
	}
	// Our own side of the same connection is never mistaken for it.
	if o, err := peer(src, ap("127.0.0.1:8788"), ap("127.0.0.1:52924")); err != nil || o.UID != 1000 || o.Inode != 74163 {
		t.Fatalf("reverse = %+v %v", o, err)
	}
	// No such connection.
	if _, err := peer(src, ap("127.0.0.1:1"), ap("127.0.0.1:8788")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing = %v", err)
	}
}

// table is a socket table of the given rows, as a source.
func table(rows ...Socket) source {
	return tableSource(func(visit func(Socket) bool) error {
		for _, s := range rows {
			if !visit(s) {
				return nil
			}
		}
		return nil
	})
}

// noListeners answers for connections and fails to list listeners.
type noListeners struct{ source }

func (noListeners) listeners(uint16, func(Socket) bool) error { return ErrTableTooLarge }

// TestPeerQueued: a server side not accepted yet (no inode) is its
// listener's, found among the listeners that could hold it, at once;
// where none could, or those that could are not one user's, the owner
// is unknown.
func TestPeerQueued(t *testing.T) {
	ap := netip.MustParseAddrPort
	const me, other = 1000, 65534
	local, remote := ap("127.0.0.1:50000"), ap("127.0.0.1:8787")
	conn := func(state uint8, uid, device int) Socket {
		return Socket{Local: remote, Remote: local, State: state, UID: uid, Device: device}
	}
	listen := func(addr string, uid int, inode uint64, device int) Socket {
		return Socket{Local: ap(addr), Remote: ap("0.0.0.0:0"), State: StateListen, UID: uid, Inode: inode, Device: device}
	}
	v6only := listen("[::]:8787", other, 9, 0)
	v6only.V6Only = true
	unknown := DeviceUnknown
	for _, tc := range []struct {
		name string
		rows []Socket
		want Owner // zero: err
		err  error
	}{
		{"root's listener, queued (uid 0 on every kernel)",
			[]Socket{conn(StateEstablished, 0, 0), listen("127.0.0.1:8787", 0, 7, 0)}, Owner{UID: 0, Inode: 7}, nil},
		{"ours, queued, a kernel without sk_uid",
			[]Socket{conn(StateEstablished, 0, 0), listen("127.0.0.1:8787", me, 7, 0)}, Owner{UID: me, Inode: 7}, nil},
		{"another user's, queued, a kernel with sk_uid",
			[]Socket{conn(StateEstablished, other, 0), listen("127.0.0.1:8787", other, 7, 0)}, Owner{UID: other, Inode: 7}, nil},
		{"another user's, queued, a kernel without sk_uid",
			[]Socket{conn(StateEstablished, 0, 0), listen("127.0.0.1:8787", other, 7, 0)}, Owner{UID: other, Inode: 7}, nil},
		{"request socket (deferred accept), sock_diag's uid 0",
			[]Socket{conn(StateSynRecv, 0, 0), listen("127.0.0.1:8787", other, 7, 0)}, Owner{UID: other, Inode: 7}, nil},
		{"IPv4 wildcard", []Socket{conn(StateEstablished, 0, 0), listen("0.0.0.0:8787", other, 7, 0)}, Owner{UID: other, Inode: 7}, nil},
		{"dual stack wildcard", []Socket{conn(StateEstablished, 0, 0), listen("[::]:8787", me, 7, 0)}, Owner{UID: me, Inode: 7}, nil},
		{"SO_REUSEPORT: several listeners of one user",
			[]Socket{conn(StateEstablished, 0, 0), listen("127.0.0.1:8787", me, 7, 0), listen("127.0.0.1:8787", me, 8, 0)}, Owner{UID: me, Inode: 7}, nil},
		{"not this port, address or device, nor an IPv6-only wildcard",
			[]Socket{conn(StateEstablished, 0, 1), listen("127.0.0.1:8788", other, 2, 1), listen("127.0.0.2:8787", other, 3, 1),
				listen("[::1]:8787", other, 4, 1), listen("127.0.0.1:8787", other, 5, 2), v6only, listen("127.0.0.1:8787", me, 7, 1)},
			Owner{UID: me, Inode: 7}, nil},
		{"bound to the loopback device, as its listener",
			[]Socket{conn(StateEstablished, 0, 1), listen("127.0.0.1:8787", other, 6, 0), listen("0.0.0.0:8787", me, 7, 1)}, Owner{UID: me, Inode: 7}, nil},
		{"no listener: it closed, resetting the connection",
			[]Socket{conn(StateEstablished, 0, 0), listen("127.0.0.1:8788", me, 7, 0)}, Owner{}, ErrNotAccepted},
		{"only a listener on another device",
			[]Socket{conn(StateEstablished, 0, 0), listen("127.0.0.1:8787", me, 7, 1)}, Owner{}, ErrNotAccepted},
		{"listeners of two users", // a table that hides what keeps them apart
			[]Socket{conn(StateEstablished, 0, 0), listen("127.0.0.1:8787", me, 7, 0), listen("0.0.0.0:8787", other, 8, 0)}, Owner{}, ErrAmbiguous},
		{"devices unknown (/proc): listeners of two users",
			[]Socket{conn(StateEstablished, 0, unknown), listen("127.0.0.1:8787", me, 7, unknown), listen("127.0.0.1:8787", other, 8, unknown)}, Owner{}, ErrAmbiguous},
		{"the connection's device unknown",
			[]Socket{conn(StateEstablished, 0, unknown), listen("127.0.0.1:8787", me, 7, 1), listen("127.0.0.1:8787", other, 8, 2)}, Owner{}, ErrAmbiguous},
		{"V6ONLY unknown (/proc): the IPv6 wildcard counts",
			[]Socket{conn(StateEstablished, 0, unknown), listen("127.0.0.1:8787", me, 7, unknown), listen("[::]:8787", other, 8, unknown)}, Owner{}, ErrAmbiguous},
		{"the connection's own uid is not its listener's",
			[]Socket{conn(StateEstablished, other, 0), listen("127.0.0.1:8787", me, 7, 0)}, Owner{}, ErrAmbiguous},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := peer(table(tc.rows...), local, remote)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("%+v %v, want %v", o, err, tc.err)
				}
				return
			}
			if err != nil || o != tc.want {
				t.Fatalf("%+v %v, want %+v", o, err, tc.want)
			}
		})
	}
	// A table that cannot list the listeners fails the answer.
	if _, err := peer(noListeners{table(conn(StateEstablished, 0, 0))}, local, remote); !errors.Is(err, ErrTableTooLarge) {
		t.Errorf("listeners unreadable: %v", err)
	}
}

func TestOwnerString(t *testing.T) {
	me := os.Getuid()
	for _, tc := range []struct {
		o    Owner
		want string
	}{
		{Owner{UID: me + 1}, fmt.Sprintf("uid %d", me+1)},
		{Owner{UID: me + 1, User: "nobody"}, fmt.Sprintf("uid %d (nobody)", me+1)},
		{Owner{UID: me + 1, User: "nobody", PID: 1234, Command: "python3"}, fmt.Sprintf("uid %d (nobody), pid 1234 (python3)", me+1)},
		{Owner{UID: me, PID: 1234, Command: "node"}, "pid 1234 (node), yours"},
		{Owner{UID: me, User: "me"}, fmt.Sprintf("uid %d (me), yours", me)},
	} {
		if got := tc.o.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.o, got, tc.want)
		}
	}
	if got := printable("evil\x1b[31m\nname"); strings.ContainsAny(got, "\x1b\n") {
		t.Errorf("printable kept control characters: %q", got)
	}
}

// FuzzParseTable: any bytes either parse into well-formed rows or fail,
// within the row limit, without panicking.
func FuzzParseTable(f *testing.F) {
	f.Add([]byte(tcp4))
	f.Add([]byte(tcp6))
	f.Add([]byte("local_address\n0: 0100007F:1000 00000000:0000 0A 0:0 0:0 0 1 0 2\n"))
	f.Add([]byte("local_address\n0: :1 : 0A 0 0 0 1 0 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		err := parseTable(bytes.NewReader(data), binary.LittleEndian, 64, func(s Socket) bool {
			n++
			for _, a := range []netip.AddrPort{s.Local, s.Remote} {
				if !a.Addr().IsValid() || a.Addr().Is4In6() || a.Addr().Zone() != "" {
					t.Fatalf("bad address %v in %+v", a, s)
				}
			}
			if s.UID < 0 || s.UID > 1<<32-1 {
				t.Fatalf("bad uid %d", s.UID)
			}
			return true
		})
		if n > 64 {
			t.Fatalf("%d rows past the limit (err %v)", n, err)
		}
	})
}
