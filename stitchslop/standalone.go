package stitchslop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
)

// Standalone idle rules (§2.7, §2.8).
const (
	NoPageWithin            = 30 * time.Minute
	DefaultAgentIdleMinutes = 120
)

// StandaloneOptions configure `hub stitchslop --origin …`.
type StandaloneOptions struct {
	Origin    string
	Port      int    // 0: scan 8787..8790
	ConfigDir string // default DefaultConfigDir
	Token     string // from STITCHSLOP_TOKEN
	AgentIdle time.Duration
	// NoPageWithin overrides §2.7's 30 minutes (tests only).
	NoPageWithin time.Duration

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// standaloneRules are §2.7 (no page ever attached within noPage) and §2.8
// (no agent activity for agentIdle, even with a page attached). An MCP
// initialize switches both off through Lifecycle.Own.
func standaloneRules(noPage, agentIdle time.Duration) hub.IdleRules {
	return hub.IdleRules{NoPageWithin: noPage, AgentIdle: agentIdle}
}

// errNoCredential is the §1 startup refusal.
var errNoCredential = errors.New("no credential")

// RunStandalone runs one bridge as its own process: the page WebSocket and
// control plane on loopback, MCP over stdin/stdout, and the idle rules of
// §2.7/§2.8. When a live bridge already serves the origin it runs as an
// MCP face of that bridge instead (see follower), unless --port pins a
// port: then it is always a bridge of its own there. It
// returns nil for every clean exit (idle, agent gone, signal) and an error
// for a refusal to start (no credential, ports busy).
func RunStandalone(ctx context.Context, o StandaloneOptions) error {
	log, err := hub.NewLogger(o.Stderr, hub.LogOptions{})
	if err != nil {
		return err
	}
	dirs, err := hub.DirsFromEnv()
	if err != nil {
		return err
	}
	if o.ConfigDir == "" {
		o.ConfigDir = DefaultConfigDir
	}
	dir := hub.ExpandHome(o.ConfigDir, dirs.Home)
	origin, ok := hub.NormalizeOrigin(o.Origin)
	if !ok {
		return fmt.Errorf("--origin must be an origin like https://www.stitchslop.com, got %q", o.Origin)
	}
	// A bridge already serving this origin holds the tab: a second one
	// would wait forever for a page that never comes, so this process
	// becomes an MCP face of that one instead (as the app's own plugin
	// does). --port is the way out: it always runs a bridge of its own on
	// that port, for a second tab (wait_for_connection's ownBridge is the
	// other).
	ports := DefaultPorts
	if o.Port != 0 {
		ports = []int{o.Port}
	} else {
		r, err := FindRemote(ctx, dir, origin, 0)
		if err != nil {
			r = awaitStarting(ctx, adapters.FollowTiming{}, log, dir, origin, ports)
		}
		if r != nil {
			return newFollower(o, dir, origin, dirs, log).run(ctx, r)
		}
		if ctx.Err() != nil {
			return nil // stopped while waiting: start nothing
		}
	}
	store := &pairingStore{dir: dir}
	// As Serve does, first make a loose pairing.json of ours private, so
	// a valid pairing is found rather than refused for its mode.
	if err := hub.EnsurePrivateDir(dir); err != nil {
		return fmt.Errorf("config dir %s: %w", dir, err)
	}
	if err := store.tightenMode(); err != nil {
		log.Warn("cannot make pairing.json private (0600)", "err", err)
	}
	paired := store.Paired(origin)
	token := o.Token
	if token != "" && store.Spent(token) {
		if !paired {
			return fmt.Errorf("%w: the token in STITCHSLOP_TOKEN was already redeemed (tokens are one-time) and %s holds no pairing for %s; reopen the Stitch Slop panel for a fresh token",
				errNoCredential, dir, origin)
		}
		log.Warn("the token in STITCHSLOP_TOKEN was already redeemed; ignoring it (the stored pairing still works)")
		token = ""
	}
	if token == "" && !paired {
		why := ""
		if _, err := store.load(); err != nil {
			why = fmt.Sprintf(" (%v; %s)", err, unreadableFate(err))
		}
		return fmt.Errorf("%w: neither STITCHSLOP_TOKEN nor a stored pairing for %s in %s%s, so no page could authenticate; set STITCHSLOP_TOKEN to the token the Stitch Slop panel shows",
			errNoCredential, origin, dir, why)
	}
	srv, err := New(&Config{Origin: origin, Ports: ports, ConfigDir: dir, Token: token})
	if err != nil {
		return err
	}
	if o.AgentIdle <= 0 {
		o.AgentIdle = DefaultAgentIdleMinutes * time.Minute
	}
	if o.NoPageWithin <= 0 {
		o.NoPageWithin = NoPageWithin
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the MCP face when the bridge stops first
	run, err := adapters.Standalone{
		Name: "stitchslop", Adapter: srv, Log: log, Dirs: &dirs,
		Lifecycle: hub.NewLifecycle(standaloneRules(o.NoPageWithin, o.AgentIdle)),
	}.Start(ctx)
	if err != nil {
		return err
	}

	kept := srv.pairingNote // called at exit: a page may pair meanwhile
	agentGone := make(chan struct{})
	// The face runs under the bridge run's guard: a panic in it (or in its
	// sync goroutine, which finds the guard in fctx) ends the run with the
	// panic as its error and the stack in the log.
	fctx := hub.WithGuard(ctx, run.Env.Guard)
	run.Env.Guard.Go("stitchslop MCP face", func() {
		initialized, err := srv.ServeMCP(fctx, &mcpserver.LineTransport{In: o.Stdin, Out: o.Stdout}, run.Lifecycle.Own)
		if fctx.Err() != nil && err != nil {
			return // a signal or the bridge stopping ended it, not the client
		}
		if !initialized {
			log.Debug("stdin closed before any MCP initialize; carrying on (started in the background?)")
			return
		}
		close(agentGone)
		run.Stop()
	})
	err = run.Wait()
	var ie *hub.IdleError
	switch {
	case errors.As(err, &ie):
		log.Info(fmt.Sprintf("exiting: %s; %s", ie.Reason, kept()))
		return nil
	case err != nil:
		return err
	}
	select {
	case <-agentGone:
		log.Info("exiting: the MCP client closed stdin (or its end of stdout), so the agent that owned this bridge is gone; " + kept())
	default:
		log.Info("exiting on request; " + kept())
	}
	return nil
}
