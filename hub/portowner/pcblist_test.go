package portowner

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
)

// pcb is one socket to lay out as xnu's pcblist_n does.
type pcb struct {
	local, remote netip.AddrPort
	v6, v4        bool // inp_vflag
	state         uint32
	uid, pid      uint32
	noSocket      bool // leave out the xsocket_n block
}

// pcbList builds a pcblist_n reply the way macOS writes it: the header,
// per socket inpcb, socket, two sockbufs, sockstat and tcpcb blocks with
// macOS 26's lengths, padded to 8 bytes, and the trailing xinpgen.
func pcbList(socks ...pcb) []byte {
	le := binary.LittleEndian
	hdr := func(n int) []byte {
		b := make([]byte, xinpgenLen)
		le.PutUint32(b, xinpgenLen)
		le.PutUint32(b[4:], uint32(n))
		return b
	}
	out := hdr(len(socks))
	block := func(kind uint32, n int, fill func([]byte)) {
		b := make([]byte, (n+7)&^7)
		le.PutUint32(b, uint32(n))
		le.PutUint32(b[4:], kind)
		for i := 8; i < n; i++ {
			b[i] = 0xAA // garbage where nothing is read
		}
		for i := n; i < len(b); i++ {
			b[i] = 0
		}
		if fill != nil {
			fill(b)
		}
		out = append(out, b...)
	}
	putAddr := func(b []byte, a netip.Addr, v6 bool) {
		clear(b[:16])
		if !a.IsValid() {
			return // unspecified
		}
		if v6 {
			a16 := a.As16()
			copy(b, a16[:])
		} else {
			a4 := a.As4()
			copy(b[12:], a4[:])
		}
	}
	for _, s := range socks {
		block(xsoInpcb, 104, func(b []byte) {
			binary.BigEndian.PutUint16(b[inpcbFport:], s.remote.Port())
			binary.BigEndian.PutUint16(b[inpcbLport:], s.local.Port())
			var vf byte
			if s.v4 {
				vf |= inpIPv4
			}
			if s.v6 {
				vf |= inpIPv6
			}
			b[inpcbVflag] = vf
			putAddr(b[inpcbFaddr:], s.remote.Addr(), s.v6)
			putAddr(b[inpcbLaddr:], s.local.Addr(), s.v6)
		})
		if !s.noSocket {
			block(xsoSocket, 104, func(b []byte) {
				le.PutUint32(b[xsocketUID:], s.uid)
				le.PutUint32(b[xsocketLastPID:], s.pid)
			})
		}
		block(0x002, 36, nil)  // XSO_RCVBUF
		block(0x004, 36, nil)  // XSO_SNDBUF
		block(0x008, 424, nil) // XSO_STATS
		block(xsoTcpcb, 204, func(b []byte) { le.PutUint32(b[xtcpcbState:], s.state) })
	}
	return append(out, hdr(len(socks))...)
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func TestParsePCBList(t *testing.T) {
	list := pcbList(
		pcb{local: ap("127.0.0.1:8787"), remote: ap("0.0.0.0:0"), v4: true, state: 1, uid: 501, pid: 900},
		pcb{local: ap("[::]:8686"), remote: ap("[::]:0"), v6: true, v4: true, state: 1, uid: 502, pid: 901},
		pcb{local: ap("[::1]:9000"), remote: ap("[::]:0"), v6: true, state: 1, uid: 0},
		pcb{local: ap("127.0.0.1:8787"), remote: ap("127.0.0.1:50000"), v4: true, state: 4, uid: 501, pid: 900},
		pcb{local: ap("127.0.0.1:8787"), remote: ap("127.0.0.1:50001"), v4: true, state: 3, uid: 501},
		pcb{local: ap("[::ffff:127.0.0.1]:8787"), remote: ap("[::ffff:127.0.0.1]:50002"), v6: true, v4: true, state: 10},
	)
	var got []Socket
	if err := parsePCBList(list, MaxRows, func(s Socket) bool { got = append(got, s); return true }); err != nil {
		t.Fatal(err)
	}
	want := []Socket{
		{Local: ap("127.0.0.1:8787"), Remote: ap("0.0.0.0:0"), State: StateListen, UID: 501, Inode: 900, Device: DeviceUnknown},
		{Local: ap("[::]:8686"), Remote: ap("[::]:0"), State: StateListen, UID: 502, Inode: 901, Device: DeviceUnknown},
		{Local: ap("[::1]:9000"), Remote: ap("[::]:0"), State: StateListen, V6Only: true, Device: DeviceUnknown},
		{Local: ap("127.0.0.1:8787"), Remote: ap("127.0.0.1:50000"), State: StateEstablished, UID: 501, Inode: 900, Device: DeviceUnknown},
		{Local: ap("127.0.0.1:8787"), Remote: ap("127.0.0.1:50001"), State: StateSynRecv, UID: 501, Device: DeviceUnknown},
		{Local: ap("127.0.0.1:8787"), Remote: ap("127.0.0.1:50002"), State: StateTimeWait, Device: DeviceUnknown},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d sockets, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("socket %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}

	// The sockets feed the same matching as Linux's table: the listener
	// on 8787, the server side of the 50000 connection.
	src := tableSource(func(visit func(Socket) bool) error { return parsePCBList(list, MaxRows, visit) })
	if o, err := listener(src, netip.MustParseAddr("127.0.0.1"), 8686); err != nil || o.UID != 502 {
		t.Errorf("listener on the dual-stack 8686 = %+v, %v", o, err)
	}
	if _, err := listener(src, netip.MustParseAddr("127.0.0.1"), 9000); !errors.Is(err, ErrNotFound) {
		t.Errorf("a v6-only listener answered for 127.0.0.1: %v", err)
	}
	s, found, err := src.conn(ap("127.0.0.1:8787"), ap("127.0.0.1:50000"))
	if err != nil || !found || s.UID != 501 || s.Inode != 900 {
		t.Errorf("conn = %+v %v %v", s, found, err)
	}

	// visit stops the walk.
	n := 0
	parsePCBList(list, MaxRows, func(Socket) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("walk went on after visit said stop: %d", n)
	}
}

func TestParsePCBListRefuses(t *testing.T) {
	good := pcbList(pcb{local: ap("127.0.0.1:1"), v4: true, state: 1, uid: 1})
	hdrOnly := pcbList()
	cases := map[string][]byte{
		"empty":             nil,
		"short header":      good[:10],
		"other header":      append([]byte{20, 0, 0, 0}, good[4:]...),
		"no trailer":        good[:len(good)-xinpgenLen],
		"cut block":         good[:xinpgenLen+50],
		"no socket block":   pcbList(pcb{local: ap("127.0.0.1:1"), v4: true, state: 1, noSocket: true}),
		"no address family": pcbList(pcb{local: ap("127.0.0.1:1"), state: 1}),
		"bad state":         pcbList(pcb{local: ap("127.0.0.1:1"), v4: true, state: 11}),
	}
	for name, b := range cases {
		if err := parsePCBList(b, MaxRows, func(Socket) bool { return true }); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if err := parsePCBList(hdrOnly, MaxRows, func(Socket) bool { t.Fatal("a socket in an empty list"); return true }); err != nil {
		t.Errorf("an empty table: %v", err)
	}
	three := pcbList(pcb{v4: true, state: 1}, pcb{v4: true, state: 1}, pcb{v4: true, state: 1})
	if err := parsePCBList(three, 2, func(Socket) bool { return true }); !errors.Is(err, ErrTableTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
}

func FuzzParsePCBList(f *testing.F) {
	f.Add(pcbList(pcb{local: ap("127.0.0.1:8787"), v4: true, state: 1, uid: 501, pid: 7}))
	f.Add(pcbList(pcb{local: ap("[::1]:1"), v6: true, state: 4}, pcb{local: ap("127.0.0.1:2"), v4: true, v6: true, state: 3}))
	f.Add(pcbList())
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		err := parsePCBList(b, 64, func(s Socket) bool {
			n++
			if !s.Local.IsValid() || !s.Remote.IsValid() {
				t.Fatalf("invalid address in %+v", s)
			}
			return true
		})
		if n > 64 {
			t.Fatalf("%d sockets past the limit", n)
		}
		_ = err
	})
}

// BenchmarkParsePCBList: a busy Mac's table, 10,000 sockets, walked whole
// (what a Peer check that finds nothing does).
func BenchmarkParsePCBList(b *testing.B) {
	socks := make([]pcb, 10000)
	for i := range socks {
		socks[i] = pcb{local: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(i)), remote: ap("127.0.0.1:80"), v4: true, state: 4, uid: 501, pid: 9}
	}
	list := pcbList(socks...)
	b.SetBytes(int64(len(list)))
	b.ReportAllocs()
	for b.Loop() {
		if err := parsePCBList(list, MaxRows, func(Socket) bool { return true }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(socks)), "ns/socket")
}
