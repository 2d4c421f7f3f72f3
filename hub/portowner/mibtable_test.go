package portowner

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
)

type mibRow struct {
	local, remote netip.AddrPort
	state, pid    uint32
}

// mibTable builds a GetExtendedTcpTable reply (TCP_TABLE_OWNER_PID_ALL)
// as Windows lays it out, with garbage in the high half of each port
// DWORD and in the scope ids, which are not read.
func mibTable(v6 bool, rows ...mibRow) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(len(rows)))
	port := func(p uint16) []byte { return []byte{byte(p >> 8), byte(p), 0xEE, 0xEE} }
	for _, r := range rows {
		if v6 {
			l, rm := r.local.Addr().As16(), r.remote.Addr().As16()
			b = append(b, l[:]...)
			b = le.AppendUint32(b, 0xDDDD)
			b = append(b, port(r.local.Port())...)
			b = append(b, rm[:]...)
			b = le.AppendUint32(b, 0xDDDD)
			b = append(b, port(r.remote.Port())...)
			b = le.AppendUint32(b, r.state)
			b = le.AppendUint32(b, r.pid)
		} else {
			l, rm := r.local.Addr().As4(), r.remote.Addr().As4()
			b = le.AppendUint32(b, r.state)
			b = append(b, l[:]...)
			b = append(b, port(r.local.Port())...)
			b = append(b, rm[:]...)
			b = append(b, port(r.remote.Port())...)
			b = le.AppendUint32(b, r.pid)
		}
	}
	return append(b, 0, 0, 0, 0) // Windows's buffers are often larger than the rows
}

func TestParseMIBTable(t *testing.T) {
	const me, other = -1, -2
	ownerOf := func(pid uint32) int {
		if pid == 100 {
			return me
		}
		return other
	}
	v4 := mibTable(false,
		mibRow{ap("127.0.0.1:8787"), ap("0.0.0.0:0"), 2, 100},
		mibRow{ap("127.0.0.1:8787"), ap("127.0.0.1:50000"), 5, 100},
		mibRow{ap("127.0.0.1:50000"), ap("127.0.0.1:8787"), 5, 200},
		mibRow{ap("127.0.0.1:8686"), ap("127.0.0.1:50001"), 11, 0},
	)
	v6 := mibTable(true,
		mibRow{ap("[::]:8686"), ap("[::]:0"), 2, 300},
		mibRow{ap("[::1]:9000"), ap("[::1]:50003"), 4, 100},
	)
	var got []Socket
	collect := func(s Socket) bool { got = append(got, s); return true }
	if err := parseMIBTable(v4, false, MaxRows, ownerOf, collect); err != nil {
		t.Fatal(err)
	}
	if err := parseMIBTable(v6, true, MaxRows, ownerOf, collect); err != nil {
		t.Fatal(err)
	}
	want := []Socket{
		{Local: ap("127.0.0.1:8787"), Remote: ap("0.0.0.0:0"), State: StateListen, UID: me, Inode: 100, Device: DeviceUnknown},
		{Local: ap("127.0.0.1:8787"), Remote: ap("127.0.0.1:50000"), State: StateEstablished, UID: me, Inode: 100, Device: DeviceUnknown},
		{Local: ap("127.0.0.1:50000"), Remote: ap("127.0.0.1:8787"), State: StateEstablished, UID: other, Inode: 200, Device: DeviceUnknown},
		{Local: ap("127.0.0.1:8686"), Remote: ap("127.0.0.1:50001"), State: StateTimeWait, UID: other, Device: DeviceUnknown},
		{Local: ap("[::]:8686"), Remote: ap("[::]:0"), State: StateListen, UID: other, Inode: 300, Device: DeviceUnknown},
		{Local: ap("[::1]:9000"), Remote: ap("[::1]:50003"), State: StateSynRecv, UID: me, Inode: 100, Device: DeviceUnknown},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	cases := map[string]struct {
		b  []byte
		v6 bool
	}{
		"no count":        {nil, false},
		"rows cut":        {v4[:4+mibRow4Len*2+3], false},
		"v4 read as v6":   {v4[:len(v4)-4], true},
		"state 0":         {mibTable(false, mibRow{ap("127.0.0.1:1"), ap("0.0.0.0:0"), 0, 1}), false},
		"state undefined": {mibTable(true, mibRow{ap("[::1]:1"), ap("[::]:0"), 13, 1}), true},
	}
	for name, tc := range cases {
		if err := parseMIBTable(tc.b, tc.v6, MaxRows, ownerOf, func(Socket) bool { return true }); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if err := parseMIBTable(v4, false, 3, ownerOf, func(Socket) bool { return true }); !errors.Is(err, ErrTableTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
	huge := binary.LittleEndian.AppendUint32(nil, 1<<31)
	if err := parseMIBTable(huge, true, MaxRows, ownerOf, func(Socket) bool { return true }); !errors.Is(err, ErrTableTooLarge) {
		t.Errorf("a huge count: %v", err)
	}
}

func FuzzParseMIBTable(f *testing.F) {
	f.Add(mibTable(false, mibRow{ap("127.0.0.1:8787"), ap("0.0.0.0:0"), 2, 100}), false)
	f.Add(mibTable(true, mibRow{ap("[::1]:1"), ap("[::1]:2"), 5, 7}), true)
	f.Fuzz(func(t *testing.T, b []byte, v6 bool) {
		n := 0
		parseMIBTable(b, v6, 64, func(uint32) int { return 0 }, func(Socket) bool { n++; return true })
		if n > 64 {
			t.Fatalf("%d rows past the limit", n)
		}
	})
}

// BenchmarkParseMIBTable: 10,000 IPv4 rows walked whole, owners cached per
// pid as table_windows.go does.
func BenchmarkParseMIBTable(b *testing.B) {
	rows := make([]mibRow, 10000)
	for i := range rows {
		rows[i] = mibRow{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(i)), ap("127.0.0.1:80"), 5, uint32(i % 50)}
	}
	t := mibTable(false, rows...)
	b.SetBytes(int64(len(t)))
	b.ReportAllocs()
	for b.Loop() {
		if err := parseMIBTable(t, false, MaxRows, func(uint32) int { return -1 }, func(Socket) bool { return true }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(rows)), "ns/row")
}
