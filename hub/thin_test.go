package hub

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestLogThinner: 100 identical warnings cost 7 lines (1st, 2nd, 4th …
// 64th), each carrying its count; another kind is counted on its own; a
// flood of distinct kinds stays bounded in memory.
func TestLogThinner(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var th LogThinner
	for range 100 {
		th.Warn(log, "dropped", "prompt dropped", "seq", 1)
	}
	th.Warn(log, "other", "another kind")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d lines, want 8:\n%s", len(lines), buf.String())
	}
	for i, want := range []int{1, 2, 4, 8, 16, 32, 64} {
		if !strings.Contains(lines[i], fmt.Sprintf("count=%d", want)) || !strings.Contains(lines[i], "seq=1") {
			t.Errorf("line %d = %q, want count=%d", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[7], `msg="another kind"`) || !strings.Contains(lines[7], "count=1") {
		t.Errorf("other kind: %q", lines[7])
	}
	small := LogThinner{MaxKeys: 4}
	for i := range 1000 {
		small.Note(fmt.Sprint(i))
	}
	if len(small.counts) > 4 {
		t.Fatalf("%d kinds kept, want at most 4", len(small.counts))
	}
}

func TestWorthLogging(t *testing.T) {
	var got []int
	for n := -1; n <= 70; n++ {
		if WorthLogging(n) {
			got = append(got, n)
		}
	}
	if fmt.Sprint(got) != "[1 2 4 8 16 32 64]" {
		t.Fatalf("logged %v", got)
	}
}
