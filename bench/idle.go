package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// IdleResult is an idle hub's cost over a window.
type IdleResult struct {
	Window   time.Duration
	CPU      time.Duration // the live threads' run time in the window
	Switches int64         // context switches: wake-ups and preemptions
	RSSKiB   int64         // at the end
	HWMKiB   int64
	AnonKiB  int64 // RssAnon at the end: heap, stacks, runtime
	FileKiB  int64 // RssFile at the end: the binary's touched pages
}

// PerMinute scales a count over the window to a minute.
func (r IdleResult) PerMinute(v float64) float64 { return v * float64(time.Minute) / float64(r.Window) }

// allSections is every adapter enabled on ports from the OS.
func allSections() map[string]string {
	return map[string]string{
		"stitchslop": "origin: " + benchOrigin + "\nports: [0]\nconfig_dir: ~/.stitchslop\n",
		"aiui":       "port: 0\n",
		"pixelle":    "website: " + benchOrigin + "\nport: 0\n",
		"geturl":     "port: 0\ncontrol_port: 0\n",
	}
}

// Idle starts a hub with all four adapters and, with pages, a connected
// scripted page on each page bridge (stitchslop, pixelle, aiui), lets it
// settle for 2 s, then watches it for window with no traffic.
func Idle(ctx context.Context, dir, hubBin string, window time.Duration, pages bool) (IdleResult, error) {
	srv, err := StartHub(ctx, dir, Hub{Bin: hubBin, Adapters: allSections()})
	if err != nil {
		return IdleResult{}, err
	}
	defer srv.Stop()
	if pages {
		closeAll, err := attachPages(ctx, srv)
		if err != nil {
			return IdleResult{}, err
		}
		defer closeAll()
	}
	time.Sleep(2 * time.Second)
	before, err := srv.Usage()
	if err != nil {
		return IdleResult{}, err
	}
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return IdleResult{}, ctx.Err()
	}
	after, err := srv.Usage()
	if err != nil {
		return IdleResult{}, err
	}
	return IdleResult{Window: window, CPU: cpuBetween(before, after), Switches: after.Switches - before.Switches,
		RSSKiB: after.RSSKiB, HWMKiB: after.HWMKiB, AnonKiB: after.AnonKiB, FileKiB: after.FileKiB}, nil
}

// attachPages connects a scripted page to each page bridge of srv.
func attachPages(ctx context.Context, srv *Server) (func(), error) {
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	s := NewSecrets()
	for _, l := range []*Load{stitchslopCall(s), pixelleCommand(), aiuiIngest()} {
		c, err := l.Connect(ctx, srv, 1)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("idle page for %s: %w", l.Adapter, err)
		}
		closers = append(closers, c.Close)
	}
	return closeAll, nil
}

// IdleHub is one hub binary the idle rows watch.
type IdleHub struct {
	Name string // "" for the hub under test
	Bin  string
}

// IdleRows measures both idle shapes of each hub over passes windows and
// renders the median of each figure as Markdown. In each pass
// the hubs are watched side by side, so a base binary and the one under
// test see the same machine; a one-off in one window (a forced
// collection, another process) moves a single figure by more than the
// pages cost, and the median of several does not follow it.
func IdleRows(ctx context.Context, dir string, hubs []IdleHub, window time.Duration, passes int, log io.Writer) (string, error) {
	var b strings.Builder
	b.WriteString("| hub | CPU per minute | wake-ups per minute | RSS | peak RSS | RssAnon | RssFile |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, pages := range []bool{false, true} {
		runs := make([][]IdleResult, len(hubs))
		for pass := range max(passes, 1) {
			got := make([]IdleResult, len(hubs))
			errs := make([]error, len(hubs))
			var wg sync.WaitGroup
			for i, h := range hubs {
				wg.Go(func() { got[i], errs[i] = Idle(ctx, dir, h.Bin, window, pages) })
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				return "", err
			}
			for i, h := range hubs {
				fmt.Fprintf(log, "idle pass %d %s: %+v\n", pass+1, idleName(h, pages), got[i])
				runs[i] = append(runs[i], got[i])
			}
		}
		for i, h := range hubs {
			med := func(f func(IdleResult) float64) float64 { return median(runs[i], f) }
			perMinute := runs[i][0].PerMinute // every pass has the same window
			fmt.Fprintf(&b, "| %s | %.1f ms | %.0f | %.1f MiB | %.1f MiB | %.1f MiB | %.1f MiB |\n", idleName(h, pages),
				perMinute(med(func(r IdleResult) float64 { return float64(r.CPU.Microseconds()) / 1e3 })),
				perMinute(med(func(r IdleResult) float64 { return float64(r.Switches) })),
				med(func(r IdleResult) float64 { return float64(r.RSSKiB) / 1024 }),
				med(func(r IdleResult) float64 { return float64(r.HWMKiB) / 1024 }),
				med(func(r IdleResult) float64 { return float64(r.AnonKiB) / 1024 }),
				med(func(r IdleResult) float64 { return float64(r.FileKiB) / 1024 }))
		}
	}
	return b.String(), nil
}

func idleName(h IdleHub, pages bool) string {
	name := "no page, no agent"
	if pages {
		name = "a page on stitchslop, pixelle and aiui, no agent"
	}
	if h.Name != "" {
		name = h.Name + ": " + name
	}
	return name
}
