package stitchslop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
)

// follower is `hub stitchslop --origin …` started while a live bridge
// already serves that origin (the hub's adapter, or another standalone
// bridge): instead of a second bridge, which the tab would never find, it
// is an MCP face of that one, through its control plane. When that bridge
// goes away it takes over: it starts its own bridge on the freed port,
// with the same origin, config dir and stored pairing, so the tab finds it
// again.
type follower struct {
	o      StandaloneOptions
	dir    string
	origin string
	dirs   hub.Dirs
	log    *slog.Logger
	sb     *switchBridge
	id     string // the face id the leader logs
	// firstReady closes once the first bridge's state is known.
	firstReady chan struct{}
	firstOnce  sync.Once

	// ownReq carries wait_for_connection's ownBridge to the lead loop.
	ownReq chan ownRequest

	// The lifecycle of the bridge it may start; made at the takeover, so
	// §2.7's clock starts with that bridge, and owned if the MCP client
	// announced itself before or after.
	mu    sync.Mutex
	owned bool
	lc    *hub.Lifecycle
}

// ownRequest asks the lead loop for a bridge of this face's own.
type ownRequest struct {
	reply chan ownResult
}

type ownResult struct {
	opened bool // this request started the bridge; false: it ran already
	err    error
}

// Timings of a takeover, variables so tests can shorten them.
var (
	// takeoverBackoff is the first pause between attempts to bind the
	// freed port (doubling up to takeoverMaxBackoff): the leader releases
	// it a moment after its event stream ends.
	takeoverBackoff    = 25 * time.Millisecond
	takeoverMaxBackoff = 500 * time.Millisecond
	// freedPortFor is how long the takeover insists on the leader's port
	// before it scans the usual ports (something else may have taken it).
	freedPortFor = 15 * time.Second
	// ownBridgePorts are walked for a bridge of a face's own
	// (wait_for_connection ownBridge): the tab's four.
	ownBridgePorts = DefaultPorts
)

func newFollower(o StandaloneOptions, dir, origin string, dirs hub.Dirs, log *slog.Logger) *follower {
	return &follower{o: o, dir: dir, origin: origin, dirs: dirs, log: log,
		sb: newSwitchBridge(origin, log), id: fmt.Sprintf("face-%d", os.Getpid()), firstReady: make(chan struct{}),
		ownReq: make(chan ownRequest)}
}

// openOwn is wait_for_connection's ownBridge: stop following and run a
// bridge of this face's own on the next free port, where a second tab
// finds it (the first tab's bridge refuses it busy, §2.6, and it walks on).
func (f *follower) openOwn(ctx context.Context) (opened bool, err error) {
	req := ownRequest{reply: make(chan ownResult, 1)}
	t := time.NewTimer(freedPortFor)
	defer t.Stop()
	select {
	case f.ownReq <- req:
	case <-t.C:
		return false, errors.New("this face is between bridges (the one it followed stopped, and it is taking over); call again in a moment")
	case <-ctx.Done():
		return false, ctx.Err()
	}
	select {
	case res := <-req.reply:
		return res.opened, res.err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// run serves MCP on stdio as a face of first until the client goes away
// (§2.8, as for a bridge), a signal, or the bridge it took over ends by an
// idle rule.
func (f *follower) run(ctx context.Context, first *Remote) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	leadDone := make(chan error, 1)
	go func() { leadDone <- f.lead(ctx, first) }()
	// The first tools/list, right after initialize, should already show
	// the page's tools: serve once the bridge's current state is in.
	select {
	case <-f.firstReady:
	case <-time.After(verifyTimeout):
	}
	mcpDone := make(chan clientGone, 1)
	go func() {
		initialized, err := serveFace(ctx, f.sb, &mcpserver.LineTransport{In: f.o.Stdin, Out: f.o.Stdout}, f.own, f.openOwn)
		mcpDone <- clientGone{initialized, err != nil && ctx.Err() != nil}
	}()
	select {
	case gone := <-mcpDone:
		switch {
		case gone.stopped:
			f.log.Info("exiting on request")
		case gone.initialized:
			f.log.Info("exiting: the MCP client closed stdin (or its end of stdout), so the agent this face served is gone")
		default:
			// Started in the background, perhaps for a second tab (§2.6):
			// only a bridge of its own, on another port, would serve one.
			f.log.Info("exiting: stdin closed before any MCP initialize, and a face has nothing to serve without an MCP client (the bridge it follows keeps running)",
				"secondBridge", "for a second tab, start another bridge with --port and a free port of "+hub.FormatPorts(DefaultPorts))
		}
		cancel()
		return <-leadDone
	case err := <-leadDone:
		cancel()
		<-mcpDone
		return err
	}
}

// clientGone is how a face's MCP session ended: whether the client had
// initialized, and whether a signal (ctx) ended it rather than the client.
type clientGone struct{ initialized, stopped bool }

// own records that an MCP client owns this process (§2.7/§2.8): the
// bridge it may start then has no idle rules.
func (f *follower) own() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.owned = true
	if f.lc != nil {
		f.lc.Own()
	}
}

func (f *follower) lifecycle() *hub.Lifecycle {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lc == nil {
		noPage, idle := f.o.NoPageWithin, f.o.AgentIdle
		if noPage <= 0 {
			noPage = NoPageWithin
		}
		if idle <= 0 {
			idle = DefaultAgentIdleMinutes * time.Minute
		}
		f.lc = hub.NewLifecycle(standaloneRules(noPage, idle))
		if f.owned {
			f.lc.Own()
		}
	}
	return f.lc
}

// lead follows r, and each bridge after it, until one goes away with none
// to follow; then it takes over and runs its own bridge until that ends.
func (f *follower) lead(ctx context.Context, r *Remote) error {
	f.armToken(ctx, r)
	quick := takeoverBackoff
	for {
		r.setAgent(f.id)
		rf := newRemoteFace(r, f.log)
		f.sb.set(rf, "", &FaceReport{Mode: "following", LeaderPort: r.Port, LeaderPID: r.PID,
			Message: fmt.Sprintf("This is an MCP face of the Stitch Slop bridge on port %d (pid %d), which already serves %s; its tab is shared, and calls go to it side by side with other agents'. For a second tab, call wait_for_connection with ownBridge: true.", r.Port, r.PID, f.origin)})
		f.log.Info("a bridge already serves this origin: following it as an MCP face instead of starting a second one",
			"port", r.Port, "pid", r.PID, "origin", f.origin)
		go func() {
			<-rf.ready
			f.firstOnce.Do(func() { close(f.firstReady) })
		}()
		started := time.Now()
		fctx, stopFollowing := context.WithCancel(ctx)
		followed := make(chan error, 1)
		go func() { followed <- rf.follow(fctx, f.id) }()
		var err error
	follow:
		for {
			select {
			case err = <-followed:
				break follow
			case req := <-f.ownReq:
				srv, run, oerr := f.startBridge(ctx, ownBridgePorts) // runs as long as the face
				if oerr != nil {
					req.reply <- ownResult{err: fmt.Errorf("no bridge of this face's own could start: %w; it still follows the bridge on port %d", oerr, r.Port)}
					continue
				}
				stopFollowing()
				<-followed
				r.Close()
				msg := fmt.Sprintf("This face stopped following the bridge on port %d and runs its own on port %d, for a second tab: that tab dials %s in order, is refused busy by the first tab's bridge and attaches here.",
					r.Port, srv.Port(), hub.FormatPorts(DefaultPorts))
				f.sb.set(srv, "", &FaceReport{Mode: "own-bridge", LeaderPort: r.Port, LeaderPID: r.PID, Message: msg})
				f.log.Info("runs a bridge of its own for a second tab", "port", srv.Port(), "followed", r.Port)
				req.reply <- ownResult{opened: true}
				return f.serveOwn(ctx, run, srv, nil)
			}
		}
		stopFollowing()
		r.Close()
		if ctx.Err() != nil {
			return nil
		}
		f.sb.set(nil, "There is no bridge behind this face at the moment.", &FaceReport{Mode: "taking-over", LeaderPort: r.Port, LeaderPID: r.PID,
			Message: fmt.Sprintf("The bridge this face followed (pid %d, port %d) has stopped, so this face is taking over: it is starting its own bridge on port %d, where the tab reconnects by itself; call wait_for_connection.", r.PID, r.Port, r.Port)})
		f.log.Warn("the bridge this face followed went away; taking over", "port", r.Port, "pid", r.PID, "why", err)
		// A bridge that is shutting down may still be found once more; a
		// stream that ends at once must not turn into a busy loop.
		if time.Since(started) < time.Second {
			if !hub.Sleep(ctx, quick) {
				return nil
			}
			quick = min(quick*2, takeoverMaxBackoff)
		} else {
			quick = takeoverBackoff
		}
		next, run, srv := f.takeOver(ctx, r)
		switch {
		case next != nil:
			r = next
		case run != nil:
			return f.serveOwn(ctx, run, srv, r)
		default:
			return nil
		}
	}
}

// armToken arms STITCHSLOP_TOKEN on the bridge followed first, as `hub
// stitchslop pair` would: whoever passed a token means the tab to pair with
// whichever bridge serves it.
func (f *follower) armToken(ctx context.Context, r *Remote) {
	if f.o.Token == "" {
		return
	}
	if err := r.Pair(ctx, f.o.Token); err != nil {
		f.log.Warn("STITCHSLOP_TOKEN was not armed on the bridge this face follows", "port", r.Port, "why", err)
		return
	}
	f.log.Info("armed STITCHSLOP_TOKEN on the bridge this face follows", "port", r.Port)
}

// takeOver finds another bridge to follow, or binds one of its own: the
// port gone freed, or after freedPortFor the usual ports. It returns
// nothing when ctx ends first.
func (f *follower) takeOver(ctx context.Context, gone *Remote) (*Remote, *adapters.Running, *Server) {
	backoff := takeoverBackoff
	start := time.Now()
	for ctx.Err() == nil {
		if r, err := FindRemote(ctx, f.dir, f.origin, 0); err == nil {
			return r, nil, nil
		}
		ports := []int{gone.Port}
		if time.Since(start) > freedPortFor {
			ports = DefaultPorts
		}
		srv, run, err := f.startBridge(ctx, ports)
		if err == nil {
			return nil, run, srv
		}
		f.log.Debug("cannot start a bridge yet", "ports", hub.FormatPorts(ports), "err", err)
		if !hub.Sleep(ctx, backoff) {
			break
		}
		backoff = min(backoff*2, takeoverMaxBackoff)
	}
	return nil, nil, nil
}

// startBridge starts this process's own bridge on the first free port of
// ports. Unlike a fresh start it needs no credential: the tab returns with
// the pairing the followed bridge stored, and the face's pair tool can arm
// a token.
func (f *follower) startBridge(ctx context.Context, ports []int) (*Server, *adapters.Running, error) {
	token := f.o.Token
	if token != "" && (&pairingStore{dir: f.dir}).Spent(token) {
		token = ""
	}
	srv, err := New(&Config{Origin: f.origin, Ports: ports, ConfigDir: f.dir, Token: token})
	if err != nil {
		return nil, nil, err
	}
	run, err := adapters.Standalone{Name: "stitchslop", Adapter: srv, Log: f.log, Dirs: &f.dirs, Lifecycle: f.lifecycle()}.Start(ctx)
	if err != nil {
		return nil, nil, err
	}
	return srv, run, nil
}

// serveOwn makes the bridge this face took over (from gone; nil for one
// opened for a second tab, already behind the face) the one behind it,
// and runs it until ctx ends or an idle rule ends it.
func (f *follower) serveOwn(ctx context.Context, run *adapters.Running, srv *Server, gone *Remote) error {
	port := srv.Port()
	if gone != nil {
		f.sb.set(srv, "", &FaceReport{Mode: "took-over", LeaderPort: gone.Port, LeaderPID: gone.PID,
			Message: fmt.Sprintf("The bridge this face followed (pid %d, port %d) stopped; this face took over and runs its own bridge on port %d.", gone.PID, gone.Port, port)})
		f.log.Info("took over: this process now runs the bridge", "port", port, "origin", f.origin, "pid", os.Getpid())
	}
	go func() { // the face runs its own bridge already: say so to ownBridge
		for {
			select {
			case req := <-f.ownReq:
				req.reply <- ownResult{}
			case <-run.Done():
				return
			}
		}
	}()
	err := run.Wait()
	kept := srv.pairingNote // called at exit: a page may pair meanwhile
	var ie *hub.IdleError
	switch {
	case errors.As(err, &ie):
		f.log.Info(fmt.Sprintf("exiting: %s; %s", ie.Reason, kept()))
		return nil
	case err != nil:
		return err
	}
	f.log.Info("the bridge this face took over stopped; " + kept())
	return nil
}
