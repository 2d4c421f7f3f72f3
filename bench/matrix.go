package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Variant is one kind of server process a load runs against.
type Variant struct {
	Name string
	Kind string // "hub", "node" or "bare"
	// MaxProcs and Env shape a hub (runtime.max_procs, GOGC=...).
	MaxProcs int
	Env      []string
	// Bin, when set, is another hub binary to run (a build of main, to
	// compare a change with in one interleaved run).
	Bin string
	// Only, when set, names the loads this variant runs.
	Only []string
}

func (v Variant) runs(l *Load) bool {
	switch {
	case len(v.Only) > 0 && !slices.Contains(v.Only, l.Name):
		return false
	case v.Kind == "node":
		return l.Node != ""
	case v.Kind == "bare":
		return l.Bare
	}
	return true
}

// Pass is one measured window.
type Pass struct {
	Units   int64
	Elapsed time.Duration
	CPU     time.Duration // the server's
	FaceCPU time.Duration // the face process's, when the path has one
	HWMKiB  int64
}

// Cell is one load × variant × callers, over every pass.
type Cell struct {
	Load    *Load
	Variant Variant
	Callers int
	Passes  []Pass
	Err     error
}

// PerUnit is the median server CPU per unit over the passes, in ns (per
// op, or per byte for a MiB load).
func (c *Cell) PerUnit() float64 {
	return median(c.Passes, func(p Pass) float64 { return float64(p.CPU) / float64(max(p.Units, 1)) })
}

// FacePerUnit is the median face-process CPU per unit, ns.
func (c *Cell) FacePerUnit() float64 {
	return median(c.Passes, func(p Pass) float64 { return float64(p.FaceCPU) / float64(max(p.Units, 1)) })
}

// Rate is the median units per second.
func (c *Cell) Rate() float64 {
	return median(c.Passes, func(p Pass) float64 { return float64(p.Units) / p.Elapsed.Seconds() })
}

// HWM is the largest peak RSS seen, KiB.
func (c *Cell) HWM() int64 {
	var m int64
	for _, p := range c.Passes {
		m = max(m, p.HWMKiB)
	}
	return m
}

// median is the median of f over ps (0 for none).
func median[T any](ps []T, f func(T) float64) float64 {
	if len(ps) == 0 {
		return 0
	}
	v := make([]float64, len(ps))
	for i, p := range ps {
		v[i] = f(p)
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// Matrix is a whole run's plan.
type Matrix struct {
	Dir      string  // scratch (server homes, binaries)
	Hub      string  // the built cmd/hub
	Bare     string  // the built bench/cmd/barerelay
	NodeDir  string  // bench/node ("" skips Node)
	Loads    []*Load // rows
	Variants []Variant
	Callers  []int
	Passes   int
	// Window is how long each measured pass runs; MaxOps, when set,
	// ends a pass after that many ops per caller instead (tests).
	Window time.Duration
	MaxOps int
	// Warmup runs the load unmeasured first (Node's JIT, Go's heap
	// growth and connection pools settle): FirstWarmup on a fresh
	// server, Warmup on one the previous cell warmed; 0 runs one op per
	// caller. A JIT needs the longer one: at 0.4 s Node's pixelle relay
	// measured 3.5× its cost at 1 s.
	Warmup, FirstWarmup time.Duration
	// Secrets are the references' key and token.
	Secrets Secrets
	// Log gets a line per measured pass (nil: none).
	Log io.Writer
}

// Run measures every cell, the passes interleaved: pass 1 of every
// variant and load, then pass 2, so a change in the machine's load lands
// on every column alike. Each load gets a fresh server per pass.
func (m *Matrix) Run(ctx context.Context) []*Cell {
	var cells []*Cell
	index := map[string]*Cell{}
	for _, l := range m.Loads {
		for _, c := range m.Callers {
			for _, v := range m.Variants {
				if !v.runs(l) {
					continue
				}
				cell := &Cell{Load: l, Variant: v, Callers: c}
				cells = append(cells, cell)
				index[fmt.Sprint(l.Name, v.Name, c)] = cell
			}
		}
	}
	for pass := range m.Passes {
		for _, v := range m.Variants {
			for _, l := range m.Loads {
				if !v.runs(l) {
					continue
				}
				err := m.runServer(ctx, l, v, func(srv *Server) error {
					warmup := m.FirstWarmup
					for _, c := range m.Callers {
						cell := index[fmt.Sprint(l.Name, v.Name, c)]
						if cell.Err != nil {
							continue
						}
						p, err := m.measure(ctx, l, srv, c, warmup)
						warmup = m.Warmup
						if err != nil {
							cell.Err = err
							continue
						}
						cell.Passes = append(cell.Passes, p)
						if m.Log != nil {
							fmt.Fprintf(m.Log, "%s pass %d  %-28s %-18s c%-2d %s\n", time.Now().Format("15:04:05.0"), pass+1, l.Name, v.Name, c, (&Cell{Load: l, Passes: []Pass{p}}).format())
						}
					}
					return nil
				})
				if err != nil {
					for _, c := range m.Callers {
						if cell := index[fmt.Sprint(l.Name, v.Name, c)]; cell.Err == nil {
							cell.Err = err
						}
					}
				}
			}
		}
	}
	return cells
}

// runServer starts v's server for l, calls f, and stops it.
func (m *Matrix) runServer(ctx context.Context, l *Load, v Variant, f func(*Server) error) error {
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var srv *Server
	var err error
	switch v.Kind {
	case "hub":
		bin := m.Hub
		if v.Bin != "" {
			bin = v.Bin
		}
		srv, err = StartHub(sctx, m.Dir, Hub{Bin: bin, MaxProcs: v.MaxProcs, Env: v.Env,
			Adapters: map[string]string{l.Adapter: l.Section}})
	case "node":
		srv, err = StartRef(sctx, m.Dir, "node", append(m.Secrets.Env(), v.Env...), "node", filepath.Join(m.NodeDir, l.Node))
	case "bare":
		srv, err = StartRef(sctx, m.Dir, "bare", append(m.Secrets.Env(), v.Env...), m.Bare)
	default:
		err = fmt.Errorf("bench: unknown variant kind %q", v.Kind)
	}
	if err != nil {
		return err
	}
	defer srv.Stop()
	return f(srv)
}

// measure connects callers clients and runs them for one window.
func (m *Matrix) measure(ctx context.Context, l *Load, srv *Server, callers int, warmup time.Duration) (Pass, error) {
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cl, err := l.Connect(cctx, srv, callers)
	if err != nil {
		return Pass{}, fmt.Errorf("%s on %s: %w", l.Name, srv.Kind, err)
	}
	defer cl.Close()
	// One op per caller first, and more for Warmup: connections, caches,
	// lazy setup and a JIT are the cost of the first calls, not of each.
	if _, err := drive(cl.Ops, 1, 0); err != nil {
		return Pass{}, fmt.Errorf("%s on %s: warm-up: %w", l.Name, srv.Kind, err)
	}
	if warmup > 0 {
		if _, err := drive(cl.Ops, 0, warmup); err != nil {
			return Pass{}, fmt.Errorf("%s on %s: warm-up: %w", l.Name, srv.Kind, err)
		}
	}
	before, err := srv.Usage()
	if err != nil {
		return Pass{}, err
	}
	var faceBefore Usage
	if cl.Face != nil {
		faceBefore, _ = cl.Face.Usage()
	}
	start := time.Now()
	units, runErr := drive(cl.Ops, m.MaxOps, m.Window)
	elapsed := time.Since(start)
	after, err := srv.Usage()
	if err != nil {
		return Pass{}, err
	}
	if runErr != nil {
		return Pass{}, fmt.Errorf("%s on %s: %w", l.Name, srv.Kind, runErr)
	}
	p := Pass{Units: units, Elapsed: elapsed, CPU: cpuBetween(before, after), HWMKiB: after.HWMKiB}
	if cl.Face != nil {
		if fa, err := cl.Face.Usage(); err == nil {
			p.FaceCPU = cpuBetween(faceBefore, fa)
		}
	}
	if p.Units == 0 {
		return p, errors.New("bench: no op completed")
	}
	return p, nil
}

// drive runs every op in a loop of its own, maxOps times each (when set)
// or for window, and returns the units done; the first error stops all.
func drive(ops []func() (int64, error), maxOps int, window time.Duration) (int64, error) {
	var units atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	var errOnce sync.Once
	var firstErr error
	deadline := time.Now().Add(window)
	for _, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				if maxOps > 0 && n >= maxOps || maxOps == 0 && time.Now().After(deadline) {
					return
				}
				u, err := op()
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					stop.Store(true)
					return
				}
				units.Add(u)
			}
		}()
	}
	wg.Wait()
	return units.Load(), firstErr
}

// cpuBetween is the CPU a process (and the children it waited for) spent
// between two readings: the live threads' exact run time when the OS
// gives it and it does not fall short of the tick-counted total (a thread
// that exited took its time with it), else the 10 ms-tick total.
func cpuBetween(before, after Usage) time.Duration {
	ticks, run := after.CPU-before.CPU, after.Run-before.Run+after.Children-before.Children
	if before.Run > 0 && run > 0 && run > ticks-2*clockTick {
		return run
	}
	return ticks
}

// Table renders cells as Markdown: one row per load × callers, a column
// per variant (median CPU per unit · median rate), the peak RSS of the
// first hub variant, and the ratios of the first variant to the node and
// bare ones.
func Table(cells []*Cell, variants []Variant) string {
	var b strings.Builder
	b.WriteString("| path | callers |")
	for _, v := range variants {
		b.WriteString(" " + v.Name + " |")
	}
	b.WriteString(" hub peak RSS | hub ÷ Node | hub ÷ bare Go |\n|---|---:|")
	for range variants {
		b.WriteString("---:|")
	}
	b.WriteString("---:|---:|---:|\n")
	type rowKey struct {
		load    *Load
		callers int
	}
	var order []rowKey
	rows := map[rowKey]map[string]*Cell{}
	for _, c := range cells {
		k := rowKey{c.Load, c.Callers}
		if rows[k] == nil {
			rows[k] = map[string]*Cell{}
			order = append(order, k)
		}
		rows[k][c.Variant.Name] = c
	}
	for _, k := range order {
		row := rows[k]
		fmt.Fprintf(&b, "| %s | %d |", k.load.Name, k.callers)
		var hub, node, bare *Cell
		for _, v := range variants {
			c := row[v.Name]
			switch {
			case c == nil:
				b.WriteString(" — |")
				continue
			case c.Err != nil:
				b.WriteString(" error |")
				continue
			}
			switch {
			case v.Kind == "hub" && hub == nil:
				hub = c
			case v.Kind == "node":
				node = c
			case v.Kind == "bare":
				bare = c
			}
			b.WriteString(" " + c.format() + " |")
		}
		if hub != nil {
			fmt.Fprintf(&b, " %.1f MiB |", float64(hub.HWM())/1024)
		} else {
			b.WriteString(" — |")
		}
		for _, ref := range []*Cell{node, bare} {
			if hub == nil || ref == nil || ref.PerUnit() == 0 {
				b.WriteString(" — |")
				continue
			}
			fmt.Fprintf(&b, " %.2f× |", hub.PerUnit()/ref.PerUnit())
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (c *Cell) format() string {
	if c.Load.Unit == "MiB" {
		return fmt.Sprintf("%.2f ms/MiB · %.0f MiB/s", c.PerUnit()*(1<<20)/1e6, c.Rate()/(1<<20))
	}
	s := fmt.Sprintf("%.1f µs · %s/s", c.PerUnit()/1e3, thousands(c.Rate()))
	if f := c.FacePerUnit(); f > 0 {
		s += fmt.Sprintf(" (+%.1f µs `hub mcp`)", f/1e3)
	}
	return s
}

func thousands(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
