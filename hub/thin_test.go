package hub

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
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

// lockedBuffer is a log sink a timer may write to while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// take returns the lines written so far and forgets them.
func (b *lockedBuffer) take() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.TrimSpace(b.buf.String())
	b.buf.Reset()
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// With a Period, a flood of one kind costs its first Burst lines and then
// one summary per Period while it lasts, which counts what it left out; a
// kind quiet for a Period starts over; and the kinds kept in memory stay
// bounded.
func TestLogThinnerSummarizes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		log := slog.New(slog.NewTextHandler(&out, nil))
		th := LogThinner{Burst: 3, Period: time.Minute}

		calls := 0
		for i := range 10_000 { // 20 s of a fast flood…
			th.Log(log, slog.LevelInfo, "404", "geturl request", "status", 404, "i", i)
			calls++
			time.Sleep(2 * time.Millisecond)
		}
		if got := out.take(); len(got) != 3 {
			t.Fatalf("%d lines during the first 20 s, want the burst of 3:\n%s", len(got), strings.Join(got, "\n"))
		} else {
			for i, l := range got {
				if !strings.Contains(l, fmt.Sprintf("count=%d", i+1)) || !strings.Contains(l, fmt.Sprintf("i=%d", i)) {
					t.Errorf("line %d = %q, want count=%d", i, l, i+1)
				}
			}
		}
		for range 180 { // …then three minutes of a slow one
			th.Log(log, slog.LevelInfo, "404", "geturl request", "status", 404)
			calls++
			time.Sleep(time.Second)
		}
		time.Sleep(time.Minute)
		synctest.Wait() // a summary due now has been written
		got := out.take()
		if len(got) != 4 {
			t.Fatalf("%d summaries for 3 min 20 s of flood, want one a minute, 4:\n%s", len(got), strings.Join(got, "\n"))
		}
		summed := 3
		for _, l := range got {
			var n int
			if _, err := fmt.Sscanf(l[strings.Index(l, "suppressed="):], "suppressed=%d", &n); err != nil ||
				!strings.Contains(l, `msg="geturl request"`) || !strings.Contains(l, "period=1m0s") || !strings.Contains(l, "status=404") {
				t.Fatalf("summary %q", l)
			}
			summed += n
		}
		if summed != calls {
			t.Fatalf("the lines account for %d occurrences of %d", summed, calls)
		}

		time.Sleep(time.Minute) // quiet for a period: the kind starts over
		th.Log(log, slog.LevelInfo, "404", "geturl request")
		if got := out.take(); len(got) != 1 || !strings.Contains(got[0], "count=1") {
			t.Fatalf("after a quiet period, want a line in full:\n%s", strings.Join(got, "\n"))
		}

		small := LogThinner{Burst: 1, Period: time.Minute, MaxKeys: 4}
		for i := range 1000 {
			small.Log(log, slog.LevelInfo, fmt.Sprint(i), "kind", "k", i)
		}
		if n := len(small.runs); n > 5 {
			t.Fatalf("%d kinds kept, want at most 4 and the other kinds", n)
		}
		time.Sleep(time.Minute)
		synctest.Wait() // a summary due now has been written
		if got := out.take(); len(got) != 5 || !strings.Contains(got[4], "suppressed=996") {
			t.Fatalf("1000 kinds past a bound of 4, want 4 lines and one summary of the rest:\n%s", strings.Join(got, "\n"))
		}

		// Flush writes what is due at once, and only once.
		stopping := LogThinner{Burst: 3, Period: time.Minute}
		for range 10 {
			stopping.Log(log, slog.LevelInfo, "404", "geturl request")
		}
		stopping.Flush()
		if got := out.take(); len(got) != 4 || !strings.Contains(got[3], "suppressed=7") {
			t.Fatalf("flushed after 10, want 3 lines and a summary of 7:\n%s", strings.Join(got, "\n"))
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := out.take(); len(got) != 0 {
			t.Fatalf("a flushed summary was written again:\n%s", strings.Join(got, "\n"))
		}
	})
}
