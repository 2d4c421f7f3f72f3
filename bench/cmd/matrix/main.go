// Command matrix measures the hub's paths the way a user runs them and
// prints the table for the README's Performance section as Markdown on
// stdout (progress on stderr): every load at 1 and 16 callers against the
// hub at its default 2 Ps and at 1 P, the Node references, the bare Go
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
	window := flag.Duration("window", 2*time.Second, "how long each pass of a cell runs")
	idle := flag.Duration("idle", 60*time.Second, "how long each idle hub is watched (0 skips)")
	callers := flag.String("callers", "1,16", "caller counts, comma-separated")
	gogc := flag.Bool("gogc", true, "also run the pixelle and geturl /r rows at GOGC=200 and GOGC=off with GOMEMLIMIT=64MiB")
	only := flag.String("only", "", "run only the loads whose names contain this")
	flag.Parse()
	if err := run(*passes, *window, *idle, *callers, *gogc, *only); err != nil {
		fmt.Fprintln(os.Stderr, "matrix:", err)
		os.Exit(1)
	}
}

func run(passes int, window, idle time.Duration, callerList string, gogc bool, only string) error {
	if _, err := bench.ReadUsage(os.Getpid()); err != nil {
		return err
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "hub-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
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
	var cs []int
	for _, f := range strings.Split(callerList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-callers %q", callerList)
		}
		cs = append(cs, n)
	}
	variants := []bench.Variant{
		{Name: "hub, 2 Ps (default)", Kind: "hub"},
		{Name: "hub, 1 P", Kind: "hub", MaxProcs: 1},
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
	load0 := loadavg()
	m := &bench.Matrix{Dir: dir, Hub: hub, Bare: bare, NodeDir: nodeDir, Loads: loads, Variants: variants,
		Callers: cs, Passes: passes, Window: window, Warmup: window / 4, Secrets: s, Log: os.Stderr}
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
		rows, err := bench.IdleRows(ctx, dir, hub, idle, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Printf("\nIdle hub, all four adapters, watched %v:\n\n%s", idle, rows)
		fmt.Printf("\nLoad average after: %s.\n", loadavg())
	}
	return nil
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
