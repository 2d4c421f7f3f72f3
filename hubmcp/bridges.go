package hubmcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/aiui"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/stitchslop"
	"github.com/hubdev/hub/supervisor"
)

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
	return why
}

// settled reports whether an adapter's state can only change with the
// hub's config, so there is no point looking again.
func settled(a adapters.Status, ok bool) bool {
	return !ok || a.State == adapters.StateDisabled || a.State == adapters.StateNotImplemented || a.State == adapters.StateFailed
}

// runStitch follows the hub's stitchslop bridge through its control plane,
// again after every restart, until hctx ends.
func (f *face) runStitch(hctx context.Context, st *supervisor.State, status *hubStatus) {
	dir := hub.ExpandHome(stitchslop.DefaultConfigDir, f.o.Dirs.Home)
	if f.o.StitchslopDir != nil {
		dir = f.o.StitchslopDir(st)
	}
	for hctx.Err() == nil {
		a, ok := status.adapter(bridgeStitchslop)
		why := notRunning(bridgeStitchslop, a, ok)
		if why == "" && len(a.Ports) == 0 {
			why = "the stitchslop adapter reports no port"
		}
		if why == "" {
			r, err := stitchslop.OpenRemote(hctx, dir, a.Ports[0])
			if err == nil {
				f.setWhy(bridgeStitchslop, "")
				f.stitchFollowing()
				started := time.Now()
				err = f.stitch.Follow(hctx, r, f.id, func() { f.ready(bridgeStitchslop) })
				r.Close()
				if hctx.Err() != nil {
					return
				}
				f.log.Info("the stitchslop bridge's event stream ended", "port", a.Ports[0], "err", err)
				if time.Since(started) < time.Second && !hub.Sleep(hctx, f.o.Retry) {
					return
				}
			} else {
				why = err.Error()
			}
		}
		if why != "" {
			f.setWhy(bridgeStitchslop, why)
			f.stitchAbsent(why)
			f.ready(bridgeStitchslop)
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

// syncPixelle offers the pixelle tools while the hub runs the relay.
func (f *face) syncPixelle(ctx context.Context, status *hubStatus) {
	a, ok := status.adapter(bridgePixelle)
	why := notRunning(bridgePixelle, a, ok)
	f.setWhy(bridgePixelle, why)
	if why != "" {
		f.pixFw.Clear(ctx)
		return
	}
	f.pixFw.Sync(ctx, f.pixDefs)
}

// pixelleRelay is the hub's relay now, asked per call: a relay restarted
// meanwhile is simply used.
func (f *face) pixelleRelay(ctx context.Context) (string, error) {
	f.mu.Lock()
	st, why := f.hubSt, f.hubWhy
	f.mu.Unlock()
	if st == nil {
		return "", errors.New(why)
	}
	status, err := fetchStatus(ctx, st)
	if err != nil {
		return "", err
	}
	a, ok := status.adapter(bridgePixelle)
	if why := notRunning(bridgePixelle, a, ok); why != "" {
		return "", errors.New(why)
	}
	if len(a.Ports) == 0 {
		return "", errors.New("the pixelle relay reports no port")
	}
	return "http://" + hub.LoopbackHost + ":" + strconv.Itoa(a.Ports[0]), nil
}

// runAiui attaches to the hub's aiui backend through its control file, as
// `hub aiui mcp` does: its tools are offered, and prompts routed to this
// face arrive as notifications/claude/channel, until hctx ends.
func (f *face) runAiui(hctx context.Context, status *hubStatus) {
	a, ok := status.adapter(bridgeAiui)
	if why := notRunning(bridgeAiui, a, ok); why != "" {
		f.setWhy(bridgeAiui, why)
		f.aiuiFw.Clear(hctx)
		f.ready(bridgeAiui)
		return
	}
	var cl *aiui.Client
	for {
		var err error
		if cl, err = aiui.Locate(hctx, f.o.Dirs); err == nil {
			break
		}
		f.setWhy(bridgeAiui, err.Error())
		f.ready(bridgeAiui)
		if !hub.Sleep(hctx, f.o.Retry) {
			return
		}
	}
	cl.Face = fmt.Sprintf("%s-%s", f.id, hub.RandomHex(4))
	f.mu.Lock()
	f.aiuiCl = cl
	f.mu.Unlock()
	f.setWhy(bridgeAiui, "")
	f.aiuiFw.Sync(hctx, f.aiuiDefs)
	f.ready(bridgeAiui)
	aiui.FollowEvents(hctx, f.srv, cl, aiui.FaceOptions{CWD: f.o.CWD, Log: f.log})
	f.aiuiFw.Clear(context.Background())
}

// aiuiClient is the attached backend's client, or why there is none.
func (f *face) aiuiClient() (*aiui.Client, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.aiuiCl == nil {
		why := f.why[bridgeAiui]
		if why == "" {
			why = "not attached to an aiui backend yet"
		}
		return nil, errors.New(why)
	}
	return f.aiuiCl, nil
}

func itoa(n int) string { return strconv.Itoa(n) }
