package hubmcp

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/supervisor"
)

// bridge is one bridge of the registry with a face, and what hub mcp
// knows of it. Its fields but face are guarded by face.mu.
type bridge struct {
	name string
	face adapters.Face
	// why it offers no tools; "" while its face follows the adapter.
	why string
	// absent is the reason of the face's last Absent; "" since the face
	// last attached.
	absent string
}

// notRunning says why an adapter offers no tools, from its status line.
func notRunning(name string, a adapters.Status, ok bool) string {
	switch {
	case !ok:
		return "the hub runs no " + name + " adapter"
	case a.Note != "" && a.State == adapters.StateDisabled:
		return "adapters." + name + " is " + a.Note
	case a.State == adapters.StateDisabled:
		return "adapters." + name + " is disabled in the hub's config"
	case a.State == adapters.StateRunning:
		return ""
	}
	why := "the " + name + " adapter is " + string(a.State)
	if a.LastError != "" {
		why += " (" + a.LastError + ")"
	}
	if a.Fix != "" {
		why += "; fix: " + a.Fix
	}
	return why
}

// unreachable says why a face cannot follow its adapter, from its status
// line: notRunning, or a running adapter with no port to reach.
func unreachable(name string, a adapters.Status, ok bool) string {
	if why := notRunning(name, a, ok); why != "" {
		return why
	}
	if len(a.Ports) == 0 {
		return "the " + name + " adapter reports no port"
	}
	return ""
}

// settled reports whether an adapter's state can only change with the
// hub's config, so there is no point looking again. A failed adapter the
// hub retries (a busy port) is not: it comes up once the port frees.
func settled(a adapters.Status, ok bool) bool {
	return !ok || a.State == adapters.StateDisabled || a.State == adapters.StateNotImplemented ||
		(a.State == adapters.StateFailed && a.RetryAt.IsZero())
}

// follow keeps b's face on the hub's adapter, again after every restart,
// until hctx ends: status is the hub's answer it starts from. While the
// adapter runs the face follows it; while it does not, or the face
// cannot reach it, the face's tools are withdrawn for the reason, and
// looked at again after a pause unless the adapter's state is settled.
func (f *face) follow(hctx context.Context, st *supervisor.State, b *bridge, status *hubStatus) {
	for hctx.Err() == nil {
		a, ok := status.adapter(b.name)
		why := unreachable(b.name, a, ok)
		if why == "" {
			var attached atomic.Bool
			started := time.Now()
			err := b.face.Follow(hctx, a, func() {
				if !attached.Swap(true) {
					f.attached(b)
				}
			})
			switch {
			case hctx.Err() != nil:
				return
			case attached.Load():
				f.log.Info("the face stopped following its adapter; looking at it again", "adapter", b.name, "port", a.Ports[0], "err", err)
				if time.Since(started) < time.Second && !hub.Sleep(hctx, f.o.Retry) {
					return
				}
			case err != nil:
				why = err.Error()
			default:
				why = "the " + b.name + " adapter could not be reached"
			}
		}
		if why != "" {
			f.unavailable(b, why)
			if settled(a, ok) || !hub.Sleep(hctx, f.o.Retry) {
				return
			}
		}
		// The adapter may have restarted on another port, with a new key.
		next, err := fetchStatus(hctx, st)
		if err != nil {
			return // the hub is going; serveHub notices
		}
		status = next
	}
}

// attached notes that b's face follows its adapter and offers its tools.
func (f *face) attached(b *bridge) {
	f.mu.Lock()
	b.why, b.absent = "", ""
	f.mu.Unlock()
	f.ready(b.name)
}

// unavailable withdraws b's tools for why.
func (f *face) unavailable(b *bridge, why string) {
	f.mu.Lock()
	b.why = why
	f.mu.Unlock()
	f.absent(b, why)
	f.ready(b.name)
}

// absent withdraws b's tools for why, unless its face already has none
// for that very reason. A face announces every change of its tools with
// list_changed; a look that finds what the last one found, once a Retry
// for as long as no hub runs, is none.
func (f *face) absent(b *bridge, why string) {
	f.mu.Lock()
	same := b.absent == why
	b.absent = why
	f.mu.Unlock()
	if !same {
		b.face.Absent(why)
	}
}

// adapterNow is FaceEnv.Adapter for the adapter name: asked of the hub
// for every use, so an adapter restarted meanwhile is simply used.
func (f *face) adapterNow(name string) func(ctx context.Context) (adapters.Status, error) {
	return func(ctx context.Context) (adapters.Status, error) {
		f.mu.Lock()
		st, why := f.hubSt, f.hubWhy
		f.mu.Unlock()
		if st == nil {
			if why == "" {
				why = "not attached to a hub yet"
			}
			return adapters.Status{}, errors.New(why)
		}
		status, err := fetchStatus(ctx, st)
		if err != nil {
			return adapters.Status{}, err
		}
		a, ok := status.adapter(name)
		if why := unreachable(name, a, ok); why != "" {
			return adapters.Status{}, errors.New(why)
		}
		return a, nil
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
