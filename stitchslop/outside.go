package stitchslop

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner"
)

// followOutside is the hub's Serve while a bridge started elsewhere (a
// standalone `hub stitchslop --origin …`, or one that took over from a
// stopped hub) already serves this origin from the same config dir. The
// tab dials 8787 first and stays with that bridge, so a second one would
// wait for a page that never comes (§2.6). Instead the adapter follows it
// (adapters.Follow): it reports that bridge's port, so `hub status`, `hub
// mcp` and the shell client all reach it, arms the hub's token there, and
// returns once that bridge has stopped (its session file gone), for Serve
// to bind its own, or when ctx ends.
func (s *Server) followOutside(ctx context.Context, env *adapters.Env, log *slog.Logger, dir string, r *Remote, ready func(...int)) {
	for site, token := range s.armedTokens() {
		if err := r.PairSite(ctx, site, token); err != nil {
			log.Warn("cannot arm the token on the bridge started outside the hub", "port", r.Port, "site", site, "err", err)
		}
	}
	r.Close()
	outside := sessionFile{Port: r.Port, PID: r.PID}
	o := &outsideRun{sess: outside, bridge: NewRemoteBridge(dir, r.Port), env: env, log: log}
	defer o.bridge.Close()
	s.following.Store(o)
	s.fire()
	log.Info("a Stitch Slop bridge started outside the hub serves this origin; following it instead of starting a second one",
		"port", r.Port, "pid", r.PID)
	adapters.Follow(ctx, env, adapters.Outside[struct{}]{
		Ports: []int{r.Port},
		Check: func(context.Context) bool { return !stillRuns(dir, outside) },
	}, ready)
	s.following.CompareAndSwap(o, nil)
	s.fire()
	if ctx.Err() == nil {
		log.Info("the bridge started outside the hub stopped; the hub starts its own", "port", outside.Port, "pid", outside.PID)
	}
}

// outsideRun is a Serve that follows a bridge started outside this
// process instead of binding its own (followOutside).
type outsideRun struct {
	sess   sessionFile   // its port and pid
	bridge *RemoteBridge // its tab's tools, for geturl's plugin=stitchslop
	env    *adapters.Env
	log    *slog.Logger
}

func (o *outsideRun) note() string {
	return fmt.Sprintf("following the bridge on port %d (pid %d) started outside the hub, which serves this origin's tab; the hub takes over when it stops", o.sess.Port, o.sess.PID)
}

// stillRuns reports whether dir still holds a live session file of the
// bridge on o.Port with pid o.PID.
func stillRuns(dir string, o sessionFile) bool {
	for _, sf := range scanSessions(dir).Live {
		if sf.Port == o.Port && sf.PID == o.PID {
			return true
		}
	}
	return false
}

// awaitStarting returns the bridge for origin starting on ports[0] in dir;
// nil when that port is free (or comes free), another user holds it (no
// bridge of ours will show up there; binding then says who), or nothing
// shows up there within the timing's Settle (a bridge binds its port a
// moment before it writes its session file, and a hub and a standalone
// started together each took another port then, a second bridge the tab,
// dialing 8787 first (§2.6), never reaches).
func awaitStarting(ctx context.Context, timing adapters.FollowTiming, log *slog.Logger, dir, origin string, ports []int) *Remote {
	if len(ports) == 0 || ports[0] == 0 || portFree(ports[0]) || heldByOther(ports[0]) {
		return nil
	}
	first := ports[0]
	log.Info("the first port is taken and no session file names it (yet); waiting for the bridge there", "port", first)
	var found *Remote
	timing.Await(ctx, func() bool {
		if r, err := FindRemote(ctx, dir, origin, first); err == nil {
			found = r
			return true
		}
		return portFree(first)
	})
	return found
}

// heldByOther reports whether another user's socket listens on port.
func heldByOther(port int) bool {
	o, err := portowner.Listener(netip.MustParseAddr(hub.LoopbackHost), port)
	return err == nil && !o.Mine()
}

// portFree reports whether port can be bound now.
func portFree(port int) bool {
	ln, _, err := hub.Listen([]int{port})
	if err != nil {
		return false
	}
	ln.Close()
	return true
}
