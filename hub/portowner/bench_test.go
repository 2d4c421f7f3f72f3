package portowner

import (
	"context"
	"encoding/binary"
	"net"
	"strings"
	"testing"
)

// BenchmarkParseTable parses a 10,000-row table (recorded rows repeated):
// the cost of one look at a busy machine's socket table, without the
// kernel's side of reading /proc.
func BenchmarkParseTable(b *testing.B) {
	rows := strings.SplitAfter(tcp4, "\n")
	table := rows[0] + strings.Repeat(strings.Join(rows[1:], ""), 2500)
	b.SetBytes(int64(len(table)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := parseTable(strings.NewReader(table), binary.LittleEndian, MaxRows, func(Socket) bool { n++; return true }); err != nil || n != 10000 {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(10000, "rows/op")
}

// BenchmarkPeer is one real check of a dialled connection, as the OpenCode
// client makes before each new connection carries a byte: the whole
// system table as it stands (its row count reported).
func BenchmarkPeer(b *testing.B) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rows := 0
	if err := scanTables(func(Socket) bool { rows++; return true }); err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		if o, err := Peer(context.Background(), c); err != nil || !o.Mine() {
			b.Fatal(o, err)
		}
	}
	b.ReportMetric(float64(rows), "rows")
}
