package bench

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// built is the binaries, built once for every test of the package.
var built = sync.OnceValues(func() (bins [2]string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "hub-bench-test-")
	if err != nil {
		return bins, err
	}
	if bins[0], err = Build(ctx, dir, "./cmd/hub"); err != nil {
		return bins, err
	}
	bins[1], err = Build(ctx, dir, "./bench/cmd/barerelay")
	return bins, err
})

func TestMain(m *testing.M) {
	code := m.Run()
	if bins, err := built(); err == nil {
		os.RemoveAll(filepath.Dir(bins[0]))
	}
	os.Exit(code)
}

// setup skips where the harness cannot measure a process, and gives the
// built binaries and bench/node.
func setup(t *testing.T) (ctx context.Context, dir, hubBin, bareBin, nodeDir string) {
	t.Helper()
	if _, err := ReadUsage(os.Getpid()); errors.Is(err, errors.ErrUnsupported) {
		t.Skip("bench: this OS does not expose another process's CPU time to the harness")
	}
	if testing.Short() {
		t.Skip("bench: builds and runs the hub; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	bins, err := built()
	if err != nil {
		t.Fatal(err)
	}
	root, err := ModuleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, t.TempDir(), bins[0], bins[1], filepath.Join(root, "bench", "node")
}

// nodeReady says why the Node references cannot run, or "".
func nodeReady(nodeDir string) string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not installed"
	}
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "ws")); err != nil {
		return "bench/node has no node_modules (npm ci --prefix bench/node)"
	}
	return ""
}

// TestMatrixSmoke runs every load of the matrix briefly against every
// server kind, so the harness cannot rot: each cell must complete ops and
// the server's CPU per op must be a sane figure (more than nothing, less
// than a second).
func TestMatrixSmoke(t *testing.T) {
	ctx, dir, hubBin, bareBin, nodeDir := setup(t)
	variants := []Variant{{Name: "hub", Kind: "hub"}, {Name: "hub 1 P", Kind: "hub", MaxProcs: 1, Only: []string{"pixelle command"}}, {Name: "bare Go", Kind: "bare"}}
	if why := nodeReady(nodeDir); why != "" {
		t.Logf("skipping the Node references: %s", why)
	} else {
		variants = append(variants, Variant{Name: "Node", Kind: "node"})
	}
	s := NewSecrets()
	m := &Matrix{Dir: dir, Hub: hubBin, Bare: bareBin, NodeDir: nodeDir, Loads: Loads(s), Variants: variants,
		Callers: []int{1, 4}, Passes: 1, MaxOps: 10, Secrets: s, Log: testLog{t}}
	cells := m.Run(ctx)
	if len(cells) == 0 {
		t.Fatal("no cells")
	}
	for _, c := range cells {
		name := c.Load.Name + "/" + c.Variant.Name
		if c.Err != nil {
			t.Errorf("%s c%d: %v", name, c.Callers, c.Err)
			continue
		}
		if len(c.Passes) != 1 || c.Passes[0].Units <= 0 {
			t.Errorf("%s c%d: measured %+v, want one pass with ops", name, c.Callers, c.Passes)
			continue
		}
		p := c.Passes[0]
		if p.CPU <= 0 || p.CPU > time.Duration(p.Units)*time.Second {
			t.Errorf("%s c%d: server CPU %v for %d units", name, c.Callers, p.CPU, p.Units)
		}
		if p.HWMKiB <= 0 {
			t.Errorf("%s c%d: peak RSS %d KiB", name, c.Callers, p.HWMKiB)
		}
	}
	t.Logf("\n%s", Table(cells, variants))
	checkBareRecords(t, dir)
}

// checkBareRecords: the bare relay's aiui floor wrote every prompt it
// acked as the hub would record it, one JSON line of the joined text.
func checkBareRecords(t *testing.T, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "bare-*", "aiui.record"))
	want := aiuiFramesPerThread * (aiuiFrameBytes - len(`{"text":""}`))
	lines := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for l := range bytes.Lines(b) {
			var p struct{ Text string }
			if err := json.Unmarshal(l, &p); err != nil || len(p.Text) != want-strings.Count(p.Text, "\n") {
				t.Fatalf("%s: line of %d bytes: %v, %d bytes of text, want %d encoded", f, len(l), err, len(p.Text), want)
			}
			lines++
		}
	}
	if lines == 0 {
		t.Fatalf("the bare relay recorded no prompt (%d files)", len(files))
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestIdleSmoke watches an idle hub with all four adapters, with and
// without pages, for a moment: the figures must be read and be sane.
func TestIdleSmoke(t *testing.T) {
	ctx, dir, hubBin, _, _ := setup(t)
	for _, pages := range []bool{false, true} {
		r, err := Idle(ctx, dir, hubBin, 2*time.Second, pages)
		if err != nil {
			t.Fatalf("pages=%v: %v", pages, err)
		}
		t.Logf("pages=%v: %v CPU, %d context switches, RSS %d KiB (anon %d, file %d), peak %d KiB over %v", pages, r.CPU, r.Switches, r.RSSKiB, r.AnonKiB, r.FileKiB, r.HWMKiB, r.Window)
		if r.CPU < 0 || r.CPU > r.Window*2 || r.Switches < 0 || r.RSSKiB <= 0 || r.HWMKiB < r.RSSKiB ||
			r.AnonKiB <= 0 || r.FileKiB <= 0 || r.AnonKiB+r.FileKiB > r.RSSKiB {
			t.Errorf("pages=%v: insane idle figures %+v", pages, r)
		}
	}
}

// TestIdleRowsSideBySide renders the idle table for two hubs, each
// watched in every pass beside the other: one row per hub and shape, and
// every pass logged.
func TestIdleRowsSideBySide(t *testing.T) {
	ctx, dir, hubBin, _, _ := setup(t)
	var log strings.Builder
	rows, err := IdleRows(ctx, dir, []IdleHub{{Bin: hubBin}, {Name: "base", Bin: hubBin}}, 500*time.Millisecond, 2, &log)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s\n%s", log.String(), rows)
	if n := strings.Count(log.String(), "idle pass "); n != 8 {
		t.Errorf("%d passes logged; want 2 hubs × 2 shapes × 2 passes", n)
	}
	for _, row := range []string{"| no page, no agent |", "| base: no page, no agent |",
		"| a page on stitchslop, pixelle and aiui, no agent |", "| base: a page on stitchslop, pixelle and aiui, no agent |"} {
		if strings.Count(rows, row) != 1 {
			t.Errorf("the table has not exactly one row %q:\n%s", row, rows)
		}
	}
}

// TestBuildIsTheReleaseBuild checks the harness measures the binary users
// download: static, with no program interpreter (a cgo build asks for the
// C library's loader and maps libc, which the idle rows would count).
func TestBuildIsTheReleaseBuild(t *testing.T) {
	_, _, hubBin, _, _ := setup(t)
	f, err := elf.Open(hubBin)
	if err != nil {
		t.Skipf("bench: the hub is not an ELF binary here: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the measured hub is dynamically linked (cgo); the release is built with CGO_ENABLED=0")
		}
	}
	if f.Section(".symtab") != nil {
		t.Error("the measured hub has a symbol table; the release is linked with -s -w")
	}
}
