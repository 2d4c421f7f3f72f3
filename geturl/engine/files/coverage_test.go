package files

import (
	"fmt"
	"testing"
)

func TestCoverage(t *testing.T) {
	type obs struct {
		fp              string
		total, from, to int
	}
	cases := []struct {
		name     string
		obs      []obs
		fp       string
		complete bool
		spans    string
	}{
		{"nothing", nil, "a", false, "[]"},
		{"whole", []obs{{"a", 10, 1, 10}}, "a", true, "[[1 10]]"},
		{"pages accumulate", []obs{{"a", 10, 1, 4}, {"a", 10, 5, 10}}, "a", true, "[[1 10]]"},
		{"pages out of order", []obs{{"a", 10, 6, 10}, {"a", 10, 1, 5}}, "a", true, "[[1 10]]"},
		{"gap", []obs{{"a", 10, 1, 4}, {"a", 10, 6, 10}}, "a", false, "[[1 4] [6 10]]"},
		{"overlap", []obs{{"a", 10, 1, 7}, {"a", 10, 3, 10}}, "a", true, "[[1 10]]"},
		{"fingerprint change resets", []obs{{"a", 10, 1, 5}, {"b", 10, 6, 10}}, "b", false, "[[6 10]]"},
		{"other fingerprint asked", []obs{{"a", 10, 1, 10}}, "b", false, "[[1 10]]"},
		{"total change resets", []obs{{"a", 10, 1, 5}, {"a", 12, 6, 12}}, "a", false, "[[6 12]]"},
		{"empty file", []obs{{"e", 0, 0, 0}}, "e", true, "[]"},
		{"unknown total", []obs{{"m", -1, 1, 10}}, "m", false, "[[1 10]]"},
		{"inverted ignored", []obs{{"a", 3, 3, 2}}, "a", false, "[]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c Coverage
			for _, o := range tc.obs {
				c.Observe(o.fp, o.total, o.from, o.to)
			}
			if got := c.Complete(tc.fp); got != tc.complete {
				t.Errorf("Complete = %v", got)
			}
			if got := fmt.Sprint(c.Spans()); got != tc.spans {
				t.Errorf("spans = %s, want %s", got, tc.spans)
			}
		})
	}
}

func TestCoverageBounded(t *testing.T) {
	var c Coverage
	for i := 1; i <= 3*maxSpans; i += 2 {
		c.Observe("a", 4*maxSpans, i, i) // every other line: nothing merges
	}
	c.Observe("a", 4*maxSpans, 1000, 1100)
	spans := c.Spans()
	if len(spans) > maxSpans {
		t.Fatalf("%d spans kept", len(spans))
	}
	if fmt.Sprint(spans[len(spans)-1]) != "[1000 1100]" {
		t.Fatalf("the widest span was dropped: %v", spans[len(spans)-1])
	}
}

// A line too long for one page counts once its pieces, in order from its
// start, reach its end; a piece whose beginning was not seen counts for
// nothing, and neither does a line left clipped.
func TestCoverageClippedLine(t *testing.T) {
	piece := func(start, end, startByte int, content string, clipped bool) FileResult {
		return FileResult{Kind: KindFile, Fingerprint: "a", TotalLines: 2, StartLine: start, EndLine: end,
			StartByte: startByte, Content: content, ClippedLine: clipped}
	}
	for _, tc := range []struct {
		name     string
		pages    []FileResult
		complete bool
	}{
		{"clipped, then the next line", []FileResult{piece(1, 1, 0, "xxxx", true), piece(2, 2, 0, "y\n", false)}, false},
		{"pieces in order", []FileResult{piece(1, 1, 0, "xxxx", true), piece(1, 1, 4, "xxxx", true), piece(1, 2, 8, "xx\ny\n", false)}, true},
		{"a piece skipped", []FileResult{piece(1, 1, 0, "xxxx", true), piece(1, 2, 8, "xx\ny\n", false)}, false},
		{"rest first, then the beginning", []FileResult{piece(1, 2, 8, "xx\ny\n", false), piece(1, 1, 0, "xxxx", true)}, false},
		{"the line read whole after", []FileResult{piece(1, 1, 0, "xxxx", true), piece(2, 2, 0, "y\n", false), piece(1, 2, 0, "xxxxxxxxxx\ny\n", false)}, true},
		{"a piece of a line already read", []FileResult{piece(1, 2, 0, "xxxxxxxxxx\ny\n", false), piece(1, 1, 4, "xxxx", true)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Coverage
			for _, p := range tc.pages {
				c.ObserveResult(p)
			}
			if c.Complete("a") != tc.complete {
				t.Fatalf("complete=%v, want %v (spans %v)", !tc.complete, tc.complete, c.Spans())
			}
		})
	}
}

// A binary file is shown whole as far as it can be (kind, size,
// fingerprint), so reading it is complete coverage of that version.
func TestCoverageBinary(t *testing.T) {
	var c Coverage
	c.ObserveResult(FileResult{Kind: KindFile, Fingerprint: "b", TotalLines: 3, Binary: true, Complete: true})
	if !c.Complete("b") || c.Complete("c") {
		t.Fatal("a binary read is not complete coverage of exactly its version")
	}
}

func TestLedgerBounded(t *testing.T) {
	var l Ledger
	for i := range maxFiles + 10 {
		l.RecordFile(FileResult{Host: fmt.Sprint("/h/", i), Kind: KindFile, Fingerprint: "a", TotalLines: 1, StartLine: 1, EndLine: 1})
	}
	if len(l.files) != maxFiles {
		t.Fatalf("%d files", len(l.files))
	}
	if l.Complete("/h/0", "a") || !l.Complete(fmt.Sprint("/h/", maxFiles+9), "a") {
		t.Fatal("eviction order")
	}
	l.RecordFile(FileResult{Host: "/h/dir", Kind: KindDir})
	if _, ok := l.files["/h/dir"]; ok {
		t.Fatal("directory recorded")
	}
	l.Reset()
	if len(l.files) != 0 {
		t.Fatal("reset")
	}
}

func TestCoverageMissing(t *testing.T) {
	cases := []struct {
		name  string
		total int
		spans [][2]int
		want  string
	}{
		{"nothing read", 5, nil, "[[1 5]]"},
		{"all read", 5, [][2]int{{1, 5}}, "[]"},
		{"head read", 5, [][2]int{{1, 2}}, "[[3 5]]"},
		{"gaps", 10, [][2]int{{2, 3}, {6, 7}}, "[[1 1] [4 5] [8 10]]"},
		{"empty file", 0, nil, "[]"},
		{"unknown total", -1, [][2]int{{1, 4}}, "[]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c Coverage
			c.Observe("a", tc.total, 0, 0)
			for _, s := range tc.spans {
				c.Observe("a", tc.total, s[0], s[1])
			}
			if got := fmt.Sprint(c.Missing()); got != tc.want {
				t.Errorf("Missing = %s, want %s", got, tc.want)
			}
			if c.Total() != tc.total {
				t.Errorf("Total = %d", c.Total())
			}
		})
	}
}

func TestLedgerLookup(t *testing.T) {
	var l Ledger
	if _, ok := l.Lookup("/h/a"); ok {
		t.Fatal("empty ledger found something")
	}
	l.RecordFile(FileResult{Host: "/h/a", Kind: KindFile, Fingerprint: "f", TotalLines: 4, StartLine: 1, EndLine: 2})
	c, ok := l.Lookup("/h/a")
	if !ok || c.Fingerprint() != "f" || fmt.Sprint(c.Missing()) != "[[3 4]]" {
		t.Fatalf("Lookup = %v %v %v", ok, c.Fingerprint(), c.Missing())
	}
	c.Observe("f", 4, 3, 4) // a copy: the ledger must not change
	if l.Complete("/h/a", "f") {
		t.Fatal("Lookup returned the ledger's own coverage")
	}
	l.Invalidate("/h/a")
	if _, ok := l.Lookup("/h/a"); ok {
		t.Fatal("invalidated coverage still found")
	}
}
