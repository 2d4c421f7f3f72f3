package portowner

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"syscall"
	"testing"
)

// nlMsg is one netlink message: a header and its body, padded to 4 bytes.
func nlMsg(typ, flags uint16, seq uint32, body []byte) []byte {
	b := make([]byte, nlmsgHdrLen+len(body), nlmsgHdrLen+len(body)+3)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], typ)
	ne.PutUint16(b[6:], flags)
	ne.PutUint32(b[8:], seq)
	copy(b[nlmsgHdrLen:], body)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// diagMsg is the body the kernel writes for s (struct inet_diag_msg),
// then attrs.
func diagMsg(family uint8, s Socket, attrs ...[]byte) []byte {
	b := make([]byte, diagMsgLen)
	b[0], b[1], b[2] = family, s.State, 1
	id := b[4:]
	binary.BigEndian.PutUint16(id[0:], s.Local.Port())
	binary.BigEndian.PutUint16(id[2:], s.Remote.Port())
	put := func(dst []byte, a netip.Addr) {
		if family == afInet {
			a4 := a.As4()
			copy(dst, a4[:])
			return
		}
		a16 := netip.AddrFrom16(a.As16()).As16() // IPv4 as IPv4-mapped
		copy(dst, a16[:])
	}
	put(id[4:20], s.Local.Addr())
	put(id[20:36], s.Remote.Addr())
	ne := binary.NativeEndian
	ne.PutUint32(id[36:], uint32(s.Device))
	ne.PutUint32(id[44:], 0xdeadbeef) // a cookie: ignored
	ne.PutUint32(b[64:], uint32(s.UID))
	ne.PutUint32(b[68:], uint32(s.Inode))
	for _, a := range attrs {
		b = append(b, a...)
	}
	return b
}

// nlAttr is one attribute, padded.
func nlAttr(typ uint16, val ...byte) []byte {
	b := make([]byte, 4, 8)
	binary.NativeEndian.PutUint16(b[0:], uint16(4+len(val)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, val...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func errBody(code int32) []byte {
	b := make([]byte, 4+nlmsgHdrLen)
	binary.NativeEndian.PutUint32(b, uint32(code))
	return b
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestDiagRequest: the request is struct nlmsghdr then struct
// inet_diag_req_v2, ports and addresses in network order.
func TestDiagRequest(t *testing.T) {
	ap := netip.MustParseAddrPort
	ne := binary.NativeEndian
	b := diagRequest(7, nlmFRequest, afInet, 1<<StateEstablished, 1, ap("127.0.0.1:4096"), ap("127.0.0.1:50000"))
	if len(b) != 72 || ne.Uint32(b) != 72 || ne.Uint16(b[4:]) != 20 || ne.Uint16(b[6:]) != 1 || ne.Uint32(b[8:]) != 7 {
		t.Fatalf("header % x", b[:16])
	}
	want := concat(
		[]byte{afInet, ipprotoTCP, 0, 0}, ne.AppendUint32(nil, 1<<StateEstablished),
		[]byte{0x10, 0x00, 0xc3, 0x50}, // 4096, 50000
		[]byte{127, 0, 0, 1}, make([]byte, 12),
		[]byte{127, 0, 0, 1}, make([]byte, 12),
		ne.AppendUint32(nil, 1),
		[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	)
	if !bytes.Equal(b[16:], want) {
		t.Fatalf("request\n% x\nwant\n% x", b[16:], want)
	}
	// IPv6, and IPv4 given to an IPv6 request, which the kernel takes
	// as IPv4-mapped.
	b = diagRequest(8, nlmFRequest, afInet6, 0, 0, ap("[::1]:1"), ap("127.0.0.1:2"))
	id := b[16+8:]
	if want := netip.MustParseAddr("::1").As16(); !bytes.Equal(id[4:20], want[:]) {
		t.Errorf("src % x", id[4:20])
	}
	if want := netip.MustParseAddr("::ffff:127.0.0.1").As16(); !bytes.Equal(id[20:36], want[:]) {
		t.Errorf("dst % x", id[20:36])
	}
	// A dump by port leaves the addresses empty.
	b = diagRequest(9, nlmFRequest|nlmFDump, afInet6, 1<<StateListen, 0, netip.AddrPortFrom(netip.Addr{}, 8787), netip.AddrPort{})
	if id := b[16+8:]; !bytes.Equal(id[:4], []byte{0x22, 0x53, 0, 0}) || !bytes.Equal(id[4:40], make([]byte, 36)) {
		t.Errorf("dump id % x", id[:40])
	}
}

func TestParseDiag(t *testing.T) {
	ap := netip.MustParseAddrPort
	listen4 := Socket{Local: ap("127.0.0.1:4096"), Remote: ap("0.0.0.0:0"), State: StateListen, UID: 1000, Inode: 74159}
	listen6 := Socket{Local: ap("[::]:4096"), Remote: ap("[::]:0"), State: StateListen, UID: 65534, Inode: 74160, V6Only: true, Device: 1<<31 - 1}
	mapped := Socket{Local: ap("127.0.0.1:4096"), Remote: ap("127.0.0.1:52924"), State: StateEstablished, UID: 4294967294, Inode: 1<<32 - 1, Device: 1}
	req := Socket{Local: ap("[::1]:8789"), Remote: ap("[::1]:57800"), State: stateNewSynRecv}
	dump := concat(
		nlMsg(sockDiagByFamily, nlmFMulti, 5, diagMsg(afInet, listen4, nlAttr(8, 0))), // INET_DIAG_SHUTDOWN
		nlMsg(sockDiagByFamily, nlmFMulti, 5, diagMsg(afInet6, listen6, nlAttr(8, 0), nlAttr(attrV6Only, 1))),
		nlMsg(sockDiagByFamily, nlmFMulti, 5, diagMsg(afInet6, mapped, nlAttr(8, 0))),
		nlMsg(sockDiagByFamily, nlmFMulti, 5, diagMsg(afInet6, req)),
		nlMsg(nlmsgDone, nlmFMulti, 5, []byte{0, 0, 0, 0}),
	)
	var got []Socket
	n, done, err := parseDiag(dump, 5, func(s Socket) bool { got = append(got, s); return true })
	wantReq := req
	wantReq.State = StateSynRecv
	want := []Socket{listen4, listen6, mapped, wantReq}
	if err != nil || !done || n != 4 || len(got) != 4 {
		t.Fatalf("%d %v %v: %+v", n, done, err, got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("socket %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// A dump's datagram without NLMSG_DONE is not the end.
	if n, done, err := parseDiag(dump[:len(dump)-20], 5, func(Socket) bool { return true }); err != nil || done || n != 4 {
		t.Errorf("mid-dump: %d %v %v", n, done, err)
	}
	// One reply (an exact lookup) is the end.
	if n, done, err := parseDiag(nlMsg(sockDiagByFamily, 0, 6, diagMsg(afInet, mapped)), 6, func(Socket) bool { return true }); err != nil || !done || n != 1 {
		t.Errorf("exact: %d %v %v", n, done, err)
	}
	// The kernel's errors end the reply, as the errno they carry.
	for _, b := range [][]byte{nlMsg(nlmsgError, 0, 6, errBody(-2)), nlMsg(nlmsgDone, nlmFMulti, 6, errBody(-2)[:4])} {
		if _, done, err := parseDiag(b, 6, nil); !done || !errors.Is(err, syscall.Errno(2)) {
			t.Errorf("error reply: %v %v", done, err)
		}
	}
	if _, done, err := parseDiag(nlMsg(nlmsgError, 0, 6, errBody(0)), 6, nil); !done || err != nil {
		t.Errorf("acknowledgement: %v %v", done, err)
	}
	// visit may stop the reading.
	if n, done, err := parseDiag(dump, 5, func(Socket) bool { return false }); !errors.Is(err, errStopped) || done || n != 1 {
		t.Errorf("stopped: %d %v %v", n, done, err)
	}
}

func TestParseDiagRefuses(t *testing.T) {
	ap := netip.MustParseAddrPort
	s := Socket{Local: ap("127.0.0.1:4096"), Remote: ap("127.0.0.1:50000"), State: StateEstablished, UID: 1, Inode: 2}
	good := nlMsg(sockDiagByFamily, 0, 1, diagMsg(afInet, s))
	withLen := func(b []byte, n uint32) []byte {
		b = bytes.Clone(b)
		binary.NativeEndian.PutUint32(b, n)
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"short header", good[:15]},
		{"length below the header", withLen(good, 15)},
		{"length past the datagram", withLen(good, uint32(len(good)+1))},
		{"short socket message", nlMsg(sockDiagByFamily, 0, 1, diagMsg(afInet, s)[:diagMsgLen-1])},
		{"another request's reply", nlMsg(sockDiagByFamily, 0, 2, diagMsg(afInet, s))},
		{"unknown message type", nlMsg(99, 0, 1, diagMsg(afInet, s))},
		{"unknown family", nlMsg(sockDiagByFamily, 0, 1, diagMsg(7, s))},
		{"device index beyond an int", nlMsg(sockDiagByFamily, 0, 1, diagMsg(afInet, Socket{Local: s.Local, Remote: s.Remote, Device: -2}))},
		{"dump interrupted", nlMsg(sockDiagByFamily, nlmFMulti|nlmFDumpIntr, 1, diagMsg(afInet, s))},
		{"short error", nlMsg(nlmsgError, 0, 1, []byte{1})},
		{"positive error", nlMsg(nlmsgError, 0, 1, errBody(5))},
		{"attribute past the message", nlMsg(sockDiagByFamily, 0, 1, concat(diagMsg(afInet, s), []byte{9, 0, 1, 0, 0}))},
		{"attribute shorter than its header", nlMsg(sockDiagByFamily, 0, 1, concat(diagMsg(afInet, s), []byte{2, 0, 1, 0}))},
		{"trailing bytes", concat(nlMsg(sockDiagByFamily, nlmFMulti, 1, diagMsg(afInet, s)), []byte{1, 2, 3})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, done, err := parseDiag(tc.b, 1, func(Socket) bool { return true })
			if err == nil || done {
				t.Fatalf("accepted: %d %v %v", n, done, err)
			}
		})
	}
}

// FuzzParseDiag: any datagram parses into well-formed sockets or fails,
// without panicking, and never yields more sockets than it has room for.
func FuzzParseDiag(f *testing.F) {
	ap := netip.MustParseAddrPort
	s := Socket{Local: ap("127.0.0.1:4096"), Remote: ap("127.0.0.1:50000"), State: StateEstablished, UID: 1, Inode: 2}
	l6 := Socket{Local: ap("[::]:4096"), Remote: ap("[::]:0"), State: StateListen, UID: 65534, Inode: 3}
	f.Add(nlMsg(sockDiagByFamily, 0, 1, diagMsg(afInet, s)))
	f.Add(concat(
		nlMsg(sockDiagByFamily, nlmFMulti, 1, diagMsg(afInet6, l6, nlAttr(8, 0), nlAttr(attrV6Only, 1))),
		nlMsg(sockDiagByFamily, nlmFMulti, 1, diagMsg(afInet6, s)),
		nlMsg(nlmsgDone, nlmFMulti, 1, []byte{0, 0, 0, 0}),
	))
	f.Add(nlMsg(nlmsgError, 0, 1, errBody(-2)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		got, _, _ := parseDiag(data, 1, func(s Socket) bool {
			n++
			for _, a := range []netip.AddrPort{s.Local, s.Remote} {
				if !a.Addr().IsValid() || a.Addr().Is4In6() || a.Addr().Zone() != "" {
					t.Fatalf("bad address %v in %+v", a, s)
				}
			}
			if s.UID < 0 || s.UID > 1<<32-1 || s.Inode > 1<<32-1 || s.State == stateNewSynRecv || s.Device < 0 {
				t.Fatalf("bad socket %+v", s)
			}
			return true
		})
		if got != n || n > len(data)/(nlmsgHdrLen+diagMsgLen) {
			t.Fatalf("%d sockets (%d visited) from %d bytes", got, n, len(data))
		}
	})
}

// failing is a source that cannot answer.
type failing struct{ visited *int }

func (f failing) listeners(uint16, func(Socket) bool) error { return errors.New("no netlink here") }
func (f failing) conn(netip.AddrPort, netip.AddrPort) (Socket, bool, error) {
	*f.visited++
	return Socket{}, false, errors.New("no netlink here")
}

// TestFallback: where the first source cannot answer, the second does; a
// first source's answer, "not found" included, stands.
func TestFallback(t *testing.T) {
	ap := netip.MustParseAddrPort
	calls := 0
	src := fallback{first: failing{&calls}, then: tableSource(recorded(tcp4, tcp6))}
	if o, err := listener(src, netip.MustParseAddr("127.0.0.1"), 4096); err != nil || o.UID != 1000 || o.Inode != 74159 {
		t.Errorf("listener = %+v %v", o, err)
	}
	if o, err := peer(src, ap("127.0.0.1:52924"), ap("127.0.0.1:8788")); err != nil || o.UID != 65534 || calls != 1 {
		t.Errorf("peer = %+v %v (%d calls)", o, err, calls)
	}
	// The first answers "no listener": the second is not asked.
	empty := tableSource(recorded(tcp4[:bytes.IndexByte([]byte(tcp4), '\n')+1]))
	src = fallback{first: empty, then: tableSource(recorded(tcp4, tcp6))}
	if _, err := listener(src, netip.MustParseAddr("127.0.0.1"), 4096); !errors.Is(err, ErrNotFound) {
		t.Errorf("first's not-found overridden: %v", err)
	}
	// Neither answers: the second's error.
	src = fallback{first: failing{&calls}, then: tableSource(func(func(Socket) bool) error { return ErrUnknown })}
	if _, err := listener(src, netip.Addr{}, 4096); !errors.Is(err, ErrUnknown) {
		t.Errorf("neither: %v", err)
	}
}
