package adapters

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// Standalone runs one adapter as its own process (`hub <adapter> serve`, a
// bridge spawned by an MCP client, a test): it builds the Env the
// supervisor would build, with the process's own lifecycle, and applies the
// lifecycle's idle rules.
type Standalone struct {
	Name    string
	Adapter Adapter
	// Log is the process log (stderr, never stdout); Start tags it
	// adapter=<name>.
	Log *slog.Logger
	// Dirs default to the environment's.
	Dirs *hub.Dirs
	// Lifecycle defaults to one without idle rules.
	Lifecycle *hub.Lifecycle
	Heartbeat ws.HeartbeatConfig
	// Follow paces following a bridge started outside (zero: defaults).
	Follow FollowTiming
	// Hub is the view of a hub the adapter runs in (nil: none).
	Hub HubView
	// ReadyTimeout bounds the wait for Ready (default 15 s).
	ReadyTimeout time.Duration
}

// Running is a started standalone adapter.
type Running struct {
	Env       *Env
	Lifecycle *hub.Lifecycle
	Ports     []int // what the adapter reported to Ready

	cancel context.CancelCauseFunc
	served chan struct{} // closed when Serve returned
	err    error         // Serve's result, once served is closed

	mu   sync.Mutex
	idle *hub.IdleError // the rule that ended the run, if one did
}

// Start serves the adapter in the background and returns once it has
// reported Ready, or with Serve's error when it stopped before that.
func (s Standalone) Start(ctx context.Context) (*Running, error) {
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	if s.Dirs == nil {
		d, err := hub.DirsFromEnv()
		if err != nil {
			return nil, err
		}
		s.Dirs = &d
	}
	if s.Lifecycle == nil {
		s.Lifecycle = hub.NewLifecycle(hub.IdleRules{})
	}
	if s.ReadyTimeout <= 0 {
		s.ReadyTimeout = 15 * time.Second
	}
	ready := make(chan []int, 1)
	r := &Running{Lifecycle: s.Lifecycle, served: make(chan struct{})}
	r.Env = &Env{
		Log:       s.Log.With("adapter", s.Name),
		Dirs:      *s.Dirs,
		Activity:  s.Lifecycle.Reporter(s.Name),
		Heartbeat: s.Heartbeat,
		Follow:    s.Follow,
		Hub:       s.Hub,
		Ready: func(ports ...int) {
			select {
			case ready <- slices.Clone(ports):
			default:
			}
		},
	}
	ctx, r.cancel = context.WithCancelCause(ctx)
	// A panic in a goroutine or callback the adapter started ends the run
	// with that panic as its error, instead of killing the process with
	// no word on stderr's log.
	r.Env.Guard = hub.NewGuard(r.Env.Log, func(pe *hub.PanicError) { r.cancel(pe) })
	go func() {
		r.err = s.Adapter.Serve(hub.WithGuard(ctx, r.Env.Guard), r.Env)
		var pe *hub.PanicError
		if errors.As(context.Cause(ctx), &pe) {
			r.err = pe
		}
		close(r.served)
	}()
	timer := time.NewTimer(s.ReadyTimeout)
	defer timer.Stop()
	select {
	case r.Ports = <-ready:
	case <-r.served:
		r.cancel(nil)
		if r.err == nil {
			r.err = errors.New("stopped before it was ready")
		}
		return nil, r.err
	case <-timer.C:
		r.Stop()
		return nil, fmt.Errorf("%s not ready after %s", s.Name, s.ReadyTimeout)
	}
	go r.watchIdle(ctx)
	return r, nil
}

// watchIdle stops the run when an idle rule fires.
func (r *Running) watchIdle(ctx context.Context) {
	var ie *hub.IdleError
	if errors.As(r.Lifecycle.Wait(ctx), &ie) {
		r.mu.Lock()
		r.idle = ie
		r.mu.Unlock()
		r.cancel(nil)
	}
}

// Done is closed when Serve has returned.
func (r *Running) Done() <-chan struct{} { return r.served }

// Wait blocks until Serve returns and reports why the run ended: the
// *hub.IdleError of the rule that fired, Serve's error, or nil after a
// requested stop.
func (r *Running) Wait() error {
	<-r.served
	r.mu.Lock()
	idle := r.idle
	r.mu.Unlock()
	if idle != nil && r.err == nil {
		return idle
	}
	return r.err
}

// Stop cancels the adapter and waits for it, returning what Wait returns.
// It is idempotent.
func (r *Running) Stop() error {
	r.cancel(nil)
	return r.Wait()
}

// Serve is Start then Wait: `hub <adapter> serve` in one call.
func (s Standalone) Serve(ctx context.Context) error {
	r, err := s.Start(ctx)
	if err != nil {
		return err
	}
	return r.Wait()
}
