package files

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

var update = flag.Bool("update", false, "rewrite golden files")

type fixture struct {
	r    *Reader
	root string
}

// bigText is n numbered lines of about 40 bytes.
func bigText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %05d the quick brown fox jumps\n", i)
	}
	return b.String()
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"small.txt":       "one\ntwo\nthree\n",
		"nonl.txt":        "a\nb",
		"empty.txt":       "",
		"big.txt":         bigText(2000),
		"mid.txt":         bigText(150),
		"long1.txt":       strings.Repeat("x", 50_000) + "\nsecond\n",
		"bin.dat":         "PK\x03\x04\x00\x00binary",
		"latin1.txt":      "caf\xe9\n",
		"utf8.txt":        "héllo wörld 😀\n",
		"dir/b.txt":       "b\n",
		"dir/a.txt":       "aa\n",
		"dir/sub/c.txt":   "c\n",
		"crlf.txt":        "x\r\ny\r\n",
		"dir/.hidden.txt": "h\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"link.txt": "small.txt", "etc": "/etc", "dangling": "nowhere", "dir/up": "../small.txt"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := mkfifo(filepath.Join(root, "fifo")); err != nil {
		t.Fatal(err)
	}
	s, err := sandbox.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{r: NewReader(s), root: s.Root()}
}

func (f fixture) read(t *testing.T, targets ...Target) Result {
	t.Helper()
	res, err := f.r.Read(targets)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(res)
	if bytes.Contains(out, []byte(f.root)) {
		t.Fatalf("result leaks the host root: %s", out)
	}
	return res
}

func (f fixture) file(name string) string {
	b, err := os.ReadFile(filepath.Join(f.root, name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestReadSingle(t *testing.T) {
	f := newFixture(t)
	type want struct {
		content          string
		start, end       int
		total            int
		complete, trunc  bool
		next             int
		clipped, invalid bool
		code             string
	}
	cases := []struct {
		name string
		t    Target
		want want
	}{
		{"whole", Target{Path: "small.txt"}, want{"one\ntwo\nthree\n", 1, 3, 3, true, false, 0, false, false, ""}},
		{"virtual", Target{Path: "/project/small.txt"}, want{"one\ntwo\nthree\n", 1, 3, 3, true, false, 0, false, false, ""}},
		{"range", Target{Path: "small.txt", Start: 2, End: 2}, want{"two\n", 2, 2, 3, true, false, 0, false, false, ""}},
		{"open end", Target{Path: "small.txt", Start: 2}, want{"two\nthree\n", 2, 3, 3, true, false, 0, false, false, ""}},
		{"end clamps", Target{Path: "small.txt", End: 99}, want{"one\ntwo\nthree\n", 1, 3, 3, true, false, 0, false, false, ""}},
		{"no final newline", Target{Path: "nonl.txt"}, want{"a\nb", 1, 2, 2, true, false, 0, false, false, ""}},
		{"last line only", Target{Path: "nonl.txt", Start: 2}, want{"b", 2, 2, 2, true, false, 0, false, false, ""}},
		{"empty", Target{Path: "empty.txt"}, want{"", 0, 0, 0, true, false, 0, false, false, ""}},
		{"crlf kept", Target{Path: "crlf.txt"}, want{"x\r\ny\r\n", 1, 2, 2, true, false, 0, false, false, ""}},
		{"utf8", Target{Path: "utf8.txt"}, want{"héllo wörld 😀\n", 1, 1, 1, true, false, 0, false, false, ""}},
		{"latin1 flagged", Target{Path: "latin1.txt"}, want{"caf\xe9\n", 1, 1, 1, true, false, 0, false, true, ""}},
		{"symlink inside", Target{Path: "link.txt"}, want{"one\ntwo\nthree\n", 1, 3, 3, true, false, 0, false, false, ""}},
		{"long first line", Target{Path: "long1.txt"}, want{strings.Repeat("x", 24<<10), 1, 1, 2, false, true, 1, true, false, ""}},
		{"rest of the long line", Target{Path: "long1.txt", Skip: 48 << 10}, want{strings.Repeat("x", 50_000-48<<10) + "\nsecond\n", 1, 2, 2, true, false, 0, false, false, ""}},
		{"page after long line", Target{Path: "long1.txt", Start: 2}, want{"second\n", 2, 2, 2, true, false, 0, false, false, ""}},
		{"start past end", Target{Path: "small.txt", Start: 4}, want{"", 0, 0, 3, false, false, 0, false, false, "start_past_end"}},
		{"missing", Target{Path: "nope.txt"}, want{"", 0, 0, 0, false, false, 0, false, false, "path_not_found"}},
		{"traversal", Target{Path: "../x"}, want{"", 0, 0, 0, false, false, 0, false, false, "path_traversal"}},
		{"outside", Target{Path: "/etc/passwd"}, want{"", 0, 0, 0, false, false, 0, false, false, "path_outside_scope"}},
		{"symlink escape", Target{Path: "etc/passwd"}, want{"", 0, 0, 0, false, false, 0, false, false, "symlink_escape"}},
		{"fifo", Target{Path: "fifo"}, want{"", 0, 0, 0, false, false, 0, false, false, "unsupported_file_type"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := f.read(t, tc.t)
			got := res.Files[0]
			w := tc.want
			if w.code != "" {
				if got.Error == nil || got.Error.Code != w.code {
					t.Fatalf("error = %+v, want %s", got.Error, w.code)
				}
				if got.TotalLines != w.total || len(res.UnreturnedPaths) != 1 || res.AllComplete {
					t.Fatalf("failed result: %+v / %+v", got, res)
				}
				return
			}
			if got.Error != nil {
				t.Fatalf("error %+v", got.Error)
			}
			if got.Content != w.content {
				t.Errorf("content = %.60q, want %.60q", got.Content, w.content)
			}
			if got.StartLine != w.start || got.EndLine != w.end || got.TotalLines != w.total {
				t.Errorf("lines %d-%d of %d, want %d-%d of %d", got.StartLine, got.EndLine, got.TotalLines, w.start, w.end, w.total)
			}
			if got.Complete != w.complete || got.Truncated != w.trunc || got.NextStartLine != w.next {
				t.Errorf("complete=%v truncated=%v next=%d", got.Complete, got.Truncated, got.NextStartLine)
			}
			if got.ClippedLine != w.clipped || got.InvalidUTF8 != w.invalid {
				t.Errorf("clipped=%v invalid=%v", got.ClippedLine, got.InvalidUTF8)
			}
			if got.Kind != KindFile || got.Fingerprint != Fingerprint([]byte(f.file(strings.TrimPrefix(got.Path, "/project/")))) {
				t.Errorf("kind %q fingerprint %q", got.Kind, got.Fingerprint)
			}
			if res.AllComplete != w.complete || !strings.HasPrefix(got.Path, "/project/") {
				t.Errorf("allComplete %v path %q", res.AllComplete, got.Path)
			}
		})
	}
}

// TestPagesReconstruct follows NextStartLine through a file larger than the
// cap: pages concatenate to the file and complete its coverage.
func TestPagesReconstruct(t *testing.T) {
	f := newFixture(t)
	want := f.file("big.txt")
	var got strings.Builder
	var cov Coverage
	var ledger Ledger
	pages := 0
	for start := 1; start != 0; pages++ {
		res := f.read(t, Target{Path: "big.txt", Start: start})
		r := res.Files[0]
		if len(r.Content) > DefaultLimits.SingleFileCap || r.StartLine != start {
			t.Fatalf("page %d: %d bytes from line %d", pages, len(r.Content), r.StartLine)
		}
		if !strings.HasSuffix(r.Content, "\n") {
			t.Fatalf("page %d does not end on a line", pages)
		}
		if cov.Complete(r.Fingerprint) {
			t.Fatalf("coverage complete after %d pages", pages)
		}
		got.WriteString(r.Content)
		cov.ObserveResult(r)
		ledger.Record(res)
		start = r.NextStartLine
		if r.Complete != (start == 0) || r.Truncated == r.Complete {
			t.Fatalf("page %d: complete=%v truncated=%v next=%d", pages, r.Complete, r.Truncated, start)
		}
	}
	if got.String() != want || pages < 3 {
		t.Fatalf("%d pages do not reconstruct the file", pages)
	}
	fp := Fingerprint([]byte(want))
	p, _ := f.r.Scope.ResolveExisting("big.txt")
	if !cov.Complete(fp) || !ledger.Complete(p.Host, fp) {
		t.Fatal("coverage not complete after every page")
	}
	if ledger.Complete(p.Host, "other") {
		t.Fatal("coverage complete for another fingerprint")
	}
	ledger.Invalidate(p.Host)
	if ledger.Complete(p.Host, fp) {
		t.Fatal("invalidated coverage still complete")
	}
}

func TestMultiReadFairShare(t *testing.T) {
	f := newFixture(t)
	res := f.read(t,
		Target{Path: "big.txt"}, Target{Path: "small.txt"}, Target{Path: "mid.txt"},
		Target{Path: "nope.txt"}, Target{Path: "bin.dat"}, Target{Path: "dir"})
	lim := DefaultLimits
	total := 0
	for _, r := range res.Files {
		total += len(r.Content)
	}
	if budget := lim.Budget - 6*lim.Overhead; total > budget {
		t.Fatalf("returned %d bytes over a %d budget", total, budget)
	}
	byPath := map[string]FileResult{}
	for _, r := range res.Files {
		byPath[r.Path] = r
	}
	if r := byPath["/project/small.txt"]; !r.Complete || r.Content != "one\ntwo\nthree\n" {
		t.Errorf("small file starved: %+v", r)
	}
	if r := byPath["/project/mid.txt"]; !r.Complete {
		t.Errorf("mid file (%d bytes) cut after a big first file: %d bytes", len(f.file("mid.txt")), len(r.Content))
	}
	if r := byPath["/project/big.txt"]; r.Complete || !r.Truncated || r.NextStartLine == 0 {
		t.Errorf("big file: %+v", r.NextStartLine)
	}
	if r := byPath["/project/bin.dat"]; !r.Binary || r.Content != "" || !r.Complete {
		t.Errorf("binary: %+v", r)
	}
	if r := byPath["/project/dir"]; r.Kind != KindDir || !r.Complete || len(r.Entries) != 5 {
		t.Errorf("dir: %+v", r)
	}
	wantLists := map[string][]string{
		"requested":  {"/project/big.txt", "/project/small.txt", "/project/mid.txt", "/project/nope.txt", "/project/bin.dat", "/project/dir"},
		"returned":   {"/project/big.txt", "/project/small.txt", "/project/mid.txt", "/project/bin.dat", "/project/dir"},
		"complete":   {"/project/small.txt", "/project/mid.txt", "/project/bin.dat", "/project/dir"},
		"incomplete": {"/project/big.txt"},
		"unreturned": {"/project/nope.txt"},
	}
	gotLists := map[string][]string{"requested": res.RequestedPaths, "returned": res.ReturnedPaths,
		"complete": res.CompletePaths, "incomplete": res.IncompletePaths, "unreturned": res.UnreturnedPaths}
	for k, w := range wantLists {
		if fmt.Sprint(gotLists[k]) != fmt.Sprint(w) {
			t.Errorf("%s = %v, want %v", k, gotLists[k], w)
		}
	}
	if res.AllComplete {
		t.Error("allComplete with a missing path")
	}
}

// TestMultiReadEqualSplit: files that all want more than a fair share get
// about the same amount, whatever their order.
func TestMultiReadEqualSplit(t *testing.T) {
	f := newFixture(t)
	res := f.read(t, Target{Path: "big.txt"}, Target{Path: "big.txt", Start: 500}, Target{Path: "long1.txt"})
	share := (DefaultLimits.Budget - 3*DefaultLimits.Overhead) / 3
	for _, r := range res.Files {
		if n := len(r.Content); n > share || n < share-64 {
			t.Errorf("%s from %d: %d bytes, fair share %d", r.Path, r.StartLine, n, share)
		}
		if !r.Truncated || r.NextStartLine == 0 {
			t.Errorf("%s not truncated", r.Path)
		}
	}
}

func TestReadDir(t *testing.T) {
	f := newFixture(t)
	res := f.read(t, Target{Path: "dir"})
	r := res.Files[0]
	want := []Entry{{".hidden.txt", KindFile, 2}, {"a.txt", KindFile, 3}, {"b.txt", KindFile, 2}, {"sub", KindDir, 0}, {"up", KindSymlink, 0}}
	if fmt.Sprint(r.Entries) != fmt.Sprint(want) {
		t.Fatalf("entries = %v", r.Entries)
	}
	if r.TotalLines != 5 || r.StartLine != 1 || r.EndLine != 5 || !r.Complete || r.Content != "" {
		t.Fatalf("dir result %+v", r)
	}
	r = f.read(t, Target{Path: "dir", Start: 2, End: 3}).Files[0]
	if len(r.Entries) != 2 || r.Entries[0].Name != "a.txt" || !r.Complete {
		t.Fatalf("dir range: %+v", r)
	}
	small := &Reader{Scope: f.r.Scope, Limits: Limits{MaxDirEntries: 2}}
	res, _ = small.Read([]Target{{Path: "."}})
	r = res.Files[0]
	if len(r.Entries) != 2 || r.Complete || !r.Truncated || r.NextStartLine != 3 {
		t.Fatalf("bounded listing: %+v", r)
	}
	if r.Path != "/project" {
		t.Fatalf("root listing path %q", r.Path)
	}
}

func TestLargeFile(t *testing.T) {
	f := newFixture(t)
	r := &Reader{Scope: f.r.Scope, Limits: Limits{MaxScanBytes: 1000}}
	res, err := r.Read([]Target{{Path: "mid.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Files[0]
	if got.TotalLines != -1 || !strings.HasPrefix(got.Fingerprint, "meta-") || got.Complete || !got.Truncated {
		t.Fatalf("large file: %+v", got)
	}
	fi, _ := os.Stat(filepath.Join(f.root, "mid.txt"))
	if want := fmt.Sprintf("meta-%x-%x", fi.Size(), fi.ModTime().UnixNano()); got.Fingerprint != want {
		t.Fatalf("fingerprint %q, want %q (size and mtime)", got.Fingerprint, want)
	}
	if len(got.Content) > 1000 || !strings.HasSuffix(got.Content, "\n") || got.NextStartLine != got.EndLine+1 {
		t.Fatalf("large file page: %d bytes, next %d", len(got.Content), got.NextStartLine)
	}
	res, _ = r.Read([]Target{{Path: "mid.txt", Start: 140}})
	if e := res.Files[0].Error; e == nil || e.Code != "start_past_scan_limit" {
		t.Fatalf("start beyond scan: %+v", res.Files[0])
	}
	var cov Coverage
	cov.ObserveResult(got)
	if cov.Complete(got.Fingerprint) {
		t.Fatal("a large file's coverage completed")
	}
}

func TestReadCallErrors(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		targets []Target
		err     error
	}{
		{nil, ErrNoPaths},
		{make([]Target, 9), ErrTooManyPaths},
		{[]Target{{Path: "a", Start: 3, End: 2}}, ErrBadRange},
		{[]Target{{Path: "a", Start: -1}}, ErrBadRange},
	}
	for _, tc := range cases {
		if _, err := f.r.Read(tc.targets); !errors.Is(err, tc.err) {
			t.Errorf("%v: err = %v, want %v", tc.targets, err, tc.err)
		}
	}
}

func TestReadGolden(t *testing.T) {
	f := newFixture(t)
	res := f.read(t, Target{Path: "small.txt", Start: 2}, Target{Path: "dir"}, Target{Path: "nonl.txt"},
		Target{Path: f.root + "/utf8.txt"}, Target{Path: "/project/../x"}, Target{Path: "bin.dat"})
	got, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "multi-read.golden.json")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("result differs from %s (go test -update):\n%s", golden, got)
	}
}

func TestShare(t *testing.T) {
	cases := []struct {
		demands       []int
		budget, limit int
		want          []int
	}{
		{[]int{100}, 1000, 1000, []int{100}},
		{[]int{5000}, 1000, 1000, []int{1000}},
		{[]int{5000, 100, 200}, 1000, 1000, []int{700, 100, 200}},
		{[]int{5000, 5000}, 1000, 1000, []int{500, 500}},
		{[]int{5000, 5000, 5000}, 1000, 1000, []int{333, 333, 334}},
		{[]int{0, 5000, 0}, 1000, 600, []int{0, 600, 0}},
		{[]int{300, 5000, 5000}, 1000, 1000, []int{300, 350, 350}},
		{[]int{10, 10}, -5, 100, []int{0, 0}},
	}
	for _, tc := range cases {
		got := []int{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1}[:len(tc.demands)] // stale values must not survive
		if share(got, tc.demands, tc.budget, tc.limit); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("share(%v, %d, %d) = %v, want %v", tc.demands, tc.budget, tc.limit, got, tc.want)
		}
	}
}

// TestReadStatSizeZero: a file whose stat size says nothing about its
// content (procfs reports 0) is read to EOF, not cut at the stat size.
func TestReadStatSizeZero(t *testing.T) {
	s, err := sandbox.New("/proc/self")
	if err != nil {
		t.Skip("no procfs")
	}
	res, err := NewReader(s).Read([]Target{{Path: "status"}})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Files[0]
	if f.Error != nil || !strings.HasPrefix(f.Content, "Name:") || f.TotalLines < 10 {
		t.Fatalf("procfs read: %+v", f)
	}
	if !strings.Contains(f.Content, "\nVmPeak:") && !strings.Contains(f.Content, "\nThreads:") {
		t.Fatalf("procfs read stopped early: %d bytes", len(f.Content))
	}
}
