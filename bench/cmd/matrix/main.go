// Command matrix measures the hub's paths the way a user runs them and
// prints the table for the README's Performance section as Markdown on
// stdout (progress on stderr): every load at 1 and 16 callers against the
// hub at its default 1 P and at 2 Ps, the Node references, the bare Go
// relay, the GOGC choices on the pixelle and geturl /r rows, and the idle
// hub. Run it from the module: `go run ./bench/cmd/matrix`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hubdev/hub/bench"
)

func main() {
	passes := flag.Int("passes", 3, "interleaved passes per cell (the table shows medians)")
	window := flag.Duration("window", 1500*time.Millisecond, "how long each pass of a cell runs")
	idle := flag.Duration("idle", 60*time.Second, "how long each idle hub is watched in one window (0 skips)")
	idlePasses := flag.Int("idle-passes", 3, "idle windows per hub; the table shows medians")
	callers := flag.String("callers", "1,16", "caller counts, comma-separated")
	gogc := flag.Bool("gogc", true, "also run the pixelle and geturl /r rows at GOGC=200 and GOGC=off with GOMEMLIMIT=64MiB")
	only := flag.String("only", "", "run only the loads whose names contain this")
	procs := flag.String("procs", "2", "runtime.max_procs values to run the hub at besides the default, comma-separated (\"\" for none; 8 stands in for a laptop's many cores)")
	base := flag.String("base", "", "another hub binary (say, main's, built as this harness builds: CGO_ENABLED=0 go build -trimpath -ldflags=\"-s -w\" -o /tmp/hub-main ./cmd/hub in its checkout) run beside this tree's at its own default, as the column \"base hub\"")
	flag.Parse()
	if err := run(*passes, *window, *idle, *idlePasses, *callers, *procs, *base, *gogc, *only); err != nil {
		fmt.Fprintln(os.Stderr, "matrix:", err)
		os.Exit(1)
	}
}

func run(passes int, window, idle time.Duration, idlePasses int, callerList, procList, base string, gogc bool, only string) error {
	if _, err := bench.ReadUsage(os.Getpid()); err != nil {
		return err
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "hub-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintln(os.Stderr, time.Now().Format("15:04:05.0"), "building")
	hub, err := bench.Build(ctx, dir, "./cmd/hub")
	if err != nil {
		return err
	}
	bare, err := bench.Build(ctx, dir, "./bench/cmd/barerelay")
	if err != nil {
		return err
	}
	root, err := bench.ModuleRoot(ctx)
	if err != nil {
		return err
	}
	cs, err := ints(callerList)
	if err != nil {
		return fmt.Errorf("-callers: %w", err)
	}
	ps, err := ints(procList)
	if err != nil {
		return fmt.Errorf("-procs: %w", err)
	}
	variants := []bench.Variant{{Name: "hub, 1 P (default)", Kind: "hub"}}
	for _, p := range ps {
		name := fmt.Sprintf("hub, %d Ps", p)
		if p == 1 {
			name = "hub, 1 P"
		}
		variants = append(variants, bench.Variant{Name: name, Kind: "hub", MaxProcs: p})
	}
	if base != "" {
		abs, err := filepath.Abs(base)
		if err != nil {
			return err
		}
		variants = append(variants, bench.Variant{Name: "base hub", Kind: "hub", Bin: abs})
	}
	nodeDir := filepath.Join(root, "bench", "node")
	if _, err := exec.LookPath("node"); err != nil {
		fmt.Fprintln(os.Stderr, "matrix: no node on PATH: the Node column is empty")
	} else if _, err := os.Stat(filepath.Join(nodeDir, "node_modules")); err != nil {
		return fmt.Errorf("bench/node has no node_modules: run npm ci --prefix bench/node")
	} else {
		variants = append(variants, bench.Variant{Name: "Node", Kind: "node"})
	}
	variants = append(variants, bench.Variant{Name: "bare Go", Kind: "bare"})
	gcRows := []string{"pixelle command", "geturl `/r` of a 4 KiB file"}
	if gogc {
		variants = append(variants,
			bench.Variant{Name: "hub, GOGC=200", Kind: "hub", Env: []string{"GOGC=200"}, Only: gcRows},
			bench.Variant{Name: "hub, GOGC=off, GOMEMLIMIT=64MiB", Kind: "hub", Env: []string{"GOGC=off", "GOMEMLIMIT=64MiB"}, Only: gcRows})
	}
	s := bench.NewSecrets()
	var loads []*bench.Load
	for _, l := range bench.Loads(s) {
		if strings.Contains(l.Name, only) {
			loads = append(loads, l)
		}
	}
	start := time.Now()
	fmt.Fprintln(os.Stderr, start.Format("15:04:05.0"), "built")
	load0 := loadavg()
	m := &bench.Matrix{Dir: dir, Hub: hub, Bare: bare, NodeDir: nodeDir, Loads: loads, Variants: variants,
		Callers: cs, Passes: passes, Window: window, Warmup: window / 4, FirstWarmup: time.Second, Secrets: s, Log: os.Stderr}
	cells := m.Run(ctx)
	load1 := loadavg()
	fmt.Printf("Server process CPU per op (user + system, every thread) · ops per second; medians of %d interleaved passes of %v; %s.\n\n",
		passes, window, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Print(bench.Table(cells, variants))
	for _, c := range cells {
		if c.Err != nil {
			fmt.Printf("\n- %s, %s, %d callers: %v", c.Load.Name, c.Variant.Name, c.Callers, c.Err)
		}
	}
	fmt.Printf("\nLoad average (1, 5, 15 min) before: %s; after: %s; %v.\n", load0, load1, time.Since(start).Round(time.Second))
	if idle > 0 {
		hubs := []bench.IdleHub{{Bin: hub}}
		if base != "" {
			abs, err := filepath.Abs(base)
			if err != nil {
				return err
			}
			hubs = append(hubs, bench.IdleHub{Name: "base", Bin: abs})
		}
		rows, err := bench.IdleRows(ctx, dir, hubs, idle, idlePasses, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Printf("\nIdle hub, all four adapters: medians of %d windows of %v, the hubs side by side in each:\n\n%s", idlePasses, idle, rows)
		fmt.Printf("\nLoad average after: %s.\n", loadavg())
	}
	return nil
}

// ints parses a comma-separated list of positive numbers ("" is none).
func ints(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}
