package inittrace

import "testing"

func TestParse(t *testing.T) {
	out := []byte("init runtime @0.60 ms, 0.24 ms clock, 0 bytes, 0 allocs\n" +
		"init example.com/a/b @23 ms, 4.8 ms clock, 697480 bytes, 9385 allocs\n" +
		"init example.com/a/bc @24 ms, 0.1 ms clock, 7 bytes, 1 allocs\n")
	for _, tc := range []struct {
		pkg  string
		want Cost
	}{
		{"example.com/a/b", Cost{697480, 9385}},
		{"example.com/a/bc", Cost{7, 1}},
		{"example.com/absent", Cost{}},
	} {
		got, err := parse(out, tc.pkg)
		if err != nil || got != tc.want {
			t.Errorf("parse(%s) = %+v, %v; want %+v", tc.pkg, got, err, tc.want)
		}
	}
}

var sink []byte

func init() { sink = make([]byte, 64<<10) }

func TestMeasureSeesThisPackagesInit(t *testing.T) {
	c, err := Measure("github.com/hubdev/hub/internal/inittrace")
	if err != nil {
		t.Fatal(err)
	}
	if c.Bytes < 64<<10 || c.Allocs < 1 {
		t.Fatalf("init cost %+v, want at least the 64 KiB this test's init allocates", c)
	}
}
