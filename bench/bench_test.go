package bench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// setup builds the binaries once per test and skips where the harness
// cannot measure a process.
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
	dir = t.TempDir()
	var err error
	if hubBin, err = Build(ctx, dir, "./cmd/hub"); err != nil {
		t.Fatal(err)
	}
	if bareBin, err = Build(ctx, dir, "./bench/cmd/barerelay"); err != nil {
		t.Fatal(err)
	}
	root, err := ModuleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nodeDir = filepath.Join(root, "bench", "node")
	return ctx, dir, hubBin, bareBin, nodeDir
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
		Callers: []int{1, 4}, Passes: 1, MaxOps: 20, Secrets: s, Log: testLog{t}}
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
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
