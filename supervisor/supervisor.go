package supervisor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// ErrShutdownTimeout reports adapters that did not stop within the deadline.
var ErrShutdownTimeout = errors.New("shutdown deadline exceeded")

// Options are the supervisor's explicit dependencies.
type Options struct {
	Config    *Config
	Dirs      hub.Dirs
	Log       *slog.Logger
	Lifecycle *hub.Lifecycle
	Heartbeat ws.HeartbeatConfig
	Backoff   Backoff // zero value = DefaultBackoff
	// StartTimeout bounds how long Serve waits for every adapter's first
	// Ready or first failure before it reports the hub ready with the
	// adapters it has (default 15 s).
	StartTimeout time.Duration
	// ShutdownTimeout bounds graceful shutdown (default from Config, else 10 s).
	ShutdownTimeout time.Duration
	// Files is the hub's one FileKeeper, handed to every adapter
	// (adapters.Env.Files); nil lets each keep its files on its own ticker.
	Files *hub.FileKeeper
}

// Supervisor runs the enabled adapters.
type Supervisor struct {
	opts  Options
	units []*unit
}

// unit is one adapter under supervision.
type unit struct {
	name    string
	adapter adapters.Adapter // nil when disabled or not implemented
	log     *slog.Logger

	// portKeys are the section's port keys, for the fix of a busy port.
	portKeys []adapters.PortKey

	mu       sync.Mutex
	state    adapters.State
	note     string
	lastErr  string
	fix      string
	retryAt  time.Time
	restarts int
	ports    []int
	runReady bool          // this run reported Ready
	ready    chan struct{} // closed at the first Ready
	readyOne sync.Once
	// settled is closed at the first Ready or the first failure to
	// start, whichever comes first: what Serve waits for.
	settled    chan struct{}
	settledOne sync.Once
	done       chan struct{} // closed when the unit's goroutine ends
}

// New builds every configured adapter. Disabled ones, ones that need the
// user, and ones not implemented yet are kept with that state for status.
func New(opts Options) (*Supervisor, error) {
	if opts.Backoff == (Backoff{}) {
		opts.Backoff = DefaultBackoff
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 15 * time.Second
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = opts.Config.Lifecycle.ShutdownTimeout()
		if opts.ShutdownTimeout <= 0 {
			opts.ShutdownTimeout = 10 * time.Second
		}
	}
	if opts.Lifecycle == nil {
		opts.Lifecycle = hub.NewLifecycle(opts.Config.Lifecycle.IdleRules())
	}
	s := &Supervisor{opts: opts}
	for _, sec := range opts.Config.Adapters {
		u := &unit{name: sec.Name, log: opts.Log.With("adapter", sec.Name), ready: make(chan struct{}),
			settled: make(chan struct{}), done: make(chan struct{})}
		if pu, ok := sec.Config.(adapters.PortUser); ok {
			u.portKeys = pu.ConfigPorts()
		}
		switch {
		case !sec.Config.Common().Enabled:
			u.state = adapters.StateDisabled
		case needsUser(sec.Config) != "":
			u.state, u.note = adapters.StateDisabled, needsUser(sec.Config)
		default:
			a, err := sec.Factory.New(sec.Config)
			switch {
			case errors.Is(err, adapters.ErrNotImplemented):
				u.state = adapters.StateNotImplemented
			case err != nil:
				return nil, fmt.Errorf("adapters.%s: %v", sec.Name, err)
			default:
				u.adapter, u.state = a, adapters.StateStarting
			}
		}
		s.units = append(s.units, u)
	}
	return s, nil
}

func needsUser(c adapters.Config) string {
	if n, ok := c.(adapters.NeedsUser); ok {
		return n.NeedsUser()
	}
	return ""
}

// Lifecycle is the lifecycle service the adapters report to.
func (s *Supervisor) Lifecycle() *hub.Lifecycle { return s.opts.Lifecycle }

// Serve starts every runnable adapter, waits until each is ready or has
// failed to start (up to StartTimeout), calls ready, and then runs until
// ctx is done or an idle rule fires. An adapter that cannot start is that
// adapter's problem: a port another process holds (anyone's: a stale
// bridge of ours, another user's) must not keep the others from serving.
// It is shown failed, with the cause and the fix (Status.Fix), and
// retried with capped backoff until it starts, so it comes up once the
// port frees. Only when adapters were to run and none could start does
// Serve stop and return a *StartError. Serve returns nil after a
// requested shutdown, an *hub.IdleError after an idle exit.
func (s *Supervisor) Serve(ctx context.Context, ready func([]adapters.Status)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var running []*unit
	for _, u := range s.units {
		if u.adapter == nil {
			close(u.done)
			continue
		}
		running = append(running, u)
		go u.run(ctx, s.opts, s.env(u))
	}
	if err := s.awaitStart(ctx, running); err != nil {
		cancel()
		s.awaitStop(running)
		return err
	}
	if err := s.noneStarted(running); err != nil {
		cancel()
		s.awaitStop(running)
		return err
	}
	if ready != nil {
		ready(s.Status())
	}
	idle := make(chan error, 1)
	go func() { idle <- s.opts.Lifecycle.Wait(ctx) }()
	var result error
	select {
	case <-ctx.Done():
	case err := <-idle:
		var ie *hub.IdleError
		if errors.As(err, &ie) {
			s.opts.Log.Info("hub exiting: idle", "reason", ie.Reason)
			result = err
		}
	}
	cancel()
	if err := s.awaitStop(running); err != nil {
		return err
	}
	return result
}

func (s *Supervisor) env(u *unit) *adapters.Env {
	return &adapters.Env{
		Log:       u.log,
		Dirs:      s.opts.Dirs,
		Activity:  s.opts.Lifecycle.Reporter(u.name),
		Heartbeat: s.opts.Heartbeat,
		Hub:       s,
		Ready:     u.markReady,
		Files:     s.opts.Files,
	}
}

// awaitStart waits for every unit's first Ready or first failure to
// start, up to StartTimeout: one still starting then is left to come up
// by itself, and the hub reports ready with the others.
func (s *Supervisor) awaitStart(ctx context.Context, units []*unit) error {
	timer := time.NewTimer(s.opts.StartTimeout)
	defer timer.Stop()
	for i, u := range units {
		select {
		case <-u.settled:
		case <-u.done:
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			var slow []string
			for _, v := range units[i:] {
				select {
				case <-v.settled:
				default:
					slow = append(slow, v.name)
				}
			}
			s.opts.Log.Warn("adapters not ready yet; the hub goes on without waiting for them", "after", s.opts.StartTimeout, "adapters", strings.Join(slow, ","))
			return nil
		}
	}
	return nil
}

// StartError is Serve's failure when adapters were to run and none could
// start. Failed holds each one's status: the cause and the fix.
type StartError struct {
	Failed []adapters.Status
}

func (e *StartError) Error() string {
	var b strings.Builder
	b.WriteString("no adapter could start")
	for i, st := range e.Failed {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "adapter %s: %s", st.Name, cmp.Or(st.LastError, "not ready"))
		if st.Fix != "" {
			b.WriteString(" (" + st.Fix + ")")
		}
	}
	return b.String()
}

// noneStarted is a *StartError when units were to run and not one of them
// is ready.
func (s *Supervisor) noneStarted(units []*unit) error {
	if len(units) == 0 {
		return nil
	}
	for _, u := range units {
		if u.everReady() {
			return nil
		}
	}
	e := &StartError{}
	for _, st := range s.Status() {
		for _, u := range units {
			if u.name == st.Name {
				e.Failed = append(e.Failed, st)
			}
		}
	}
	return e
}

// awaitStop waits for the units to return, up to the shutdown deadline.
func (s *Supervisor) awaitStop(units []*unit) error {
	deadline := time.NewTimer(s.opts.ShutdownTimeout)
	defer deadline.Stop()
	var stuck []string
	for _, u := range units {
		select {
		case <-u.done:
		case <-deadline.C:
			// The deadline has passed: collect every unit still running.
			for _, v := range units {
				select {
				case <-v.done:
				default:
					stuck = append(stuck, v.name)
				}
			}
			return fmt.Errorf("%w after %s: %s still running", ErrShutdownTimeout, s.opts.ShutdownTimeout, strings.Join(stuck, ", "))
		}
	}
	return nil
}

func (u *unit) markReady(ports ...int) {
	u.mu.Lock()
	u.ports = slices.Clone(ports)
	u.state = adapters.StateRunning
	u.runReady = true
	u.fix, u.retryAt = "", time.Time{}
	u.mu.Unlock()
	u.log.Info("adapter ready", "ports", hub.FormatPorts(ports))
	u.readyOne.Do(func() { close(u.ready) })
	u.settle()
}

func (u *unit) settle() { u.settledOne.Do(func() { close(u.settled) }) }

func (u *unit) everReady() bool {
	select {
	case <-u.ready:
		return true
	default:
		return false
	}
}

func (u *unit) setState(st adapters.State, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.state = st
	if err != nil {
		u.lastErr = err.Error()
	}
}

// run serves the adapter, restarting it with backoff until ctx is done, an
// idle rule ends it, or it crash-loops. A run that fails before it is
// ready (a busy port, a missing program) is a failure to start: the
// adapter is shown failed with the fix, and tried again after the
// backoff's delay, capped at Backoff.Max, for as long as the hub runs. A
// run that was ready and then failed is a crash, and counts toward the
// crash loop.
func (u *unit) run(ctx context.Context, opts Options, env *adapters.Env) {
	defer close(u.done)
	defer u.settle()
	failures, startFailures := 0, 0
	lastStartErr := ""
	for {
		started := time.Now()
		u.mu.Lock()
		u.runReady = false
		u.mu.Unlock()
		err := serveGuarded(ctx, u.adapter, env)
		switch {
		case ctx.Err() != nil:
			u.setState(adapters.StateStopped, nil)
			return
		case errors.Is(err, hub.ErrIdle):
			u.log.Info("adapter idle-exited", "reason", err)
			u.setState(adapters.StateIdleExited, nil)
			return
		case err == nil:
			err = errors.New("adapter stopped by itself")
		}
		u.mu.Lock()
		wasReady := u.runReady
		u.mu.Unlock()
		if !wasReady {
			startFailures++
			delay := opts.Backoff.Delay(startFailures)
			fix := fixFor(u.name, u.portKeys, err)
			u.mu.Lock()
			u.state, u.lastErr, u.fix, u.retryAt = adapters.StateFailed, err.Error(), fix, time.Now().Add(delay)
			u.mu.Unlock()
			u.settle()
			if msg := err.Error(); msg != lastStartErr {
				lastStartErr = msg
				u.log.Error("adapter cannot start; the hub runs without it and retries", "err", err, "fix", fix, "in", delay.Round(time.Millisecond).String())
			} else {
				u.log.Debug("adapter still cannot start", "err", err, "in", delay.Round(time.Millisecond).String())
			}
			if !sleepCtx(ctx, delay) {
				u.setState(adapters.StateStopped, nil)
				return
			}
			continue
		}
		startFailures, lastStartErr = 0, ""
		if time.Since(started) >= opts.Backoff.StableAfter {
			failures = 0
		}
		failures++
		if failures >= opts.Backoff.MaxFailures {
			u.log.Error("adapter failed: crash loop", "failures", failures, "err", err)
			u.setState(adapters.StateFailed, err)
			return
		}
		delay := opts.Backoff.Delay(failures)
		u.log.Warn("adapter crashed; restarting", "err", err, "in", delay.Round(time.Millisecond).String())
		u.mu.Lock()
		u.state, u.lastErr = adapters.StateRestarting, err.Error()
		u.restarts++
		u.mu.Unlock()
		if !sleepCtx(ctx, delay) {
			u.setState(adapters.StateStopped, nil)
			return
		}
	}
}

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// serveGuarded runs one Serve with a fresh guard for what the adapter
// starts outside it: a panic there cancels this run's context, and the
// run then ends as a crash (restarted with backoff) like a panic in Serve
// itself, which is turned into an error carrying the stack.
func serveGuarded(ctx context.Context, a adapters.Adapter, env *adapters.Env) (err error) {
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	guard := hub.NewGuard(env.Log, func(pe *hub.PanicError) { cancel(pe) })
	runEnv := *env
	runEnv.Guard = guard
	defer func() {
		if r := recover(); r != nil {
			env.Log.Error("adapter panicked", "panic", r, "stack", string(debug.Stack()))
			err = &hub.PanicError{Where: "Serve", Value: r}
		}
		var pe *hub.PanicError
		if ctx.Err() == nil && errors.As(context.Cause(runCtx), &pe) {
			err = pe
		}
	}()
	return a.Serve(hub.WithGuard(runCtx, guard), &runEnv)
}

// Bridge implements adapters.HubView: the named adapter as a ToolBridge
// while it is running (its last Ready is not followed by a crash or a
// stop). Between runs it is not offered, so a caller never drives a
// bridge whose listeners are down.
func (s *Supervisor) Bridge(name string) (adapters.ToolBridge, bool) {
	for _, u := range s.units {
		if u.name != name || u.adapter == nil {
			continue
		}
		u.mu.Lock()
		running := u.state == adapters.StateRunning
		u.mu.Unlock()
		b, ok := u.adapter.(adapters.ToolBridge)
		return b, ok && running
	}
	return nil, false
}

var (
	_ adapters.HubView   = (*Supervisor)(nil)
	_ adapters.StateView = (*Supervisor)(nil)
)

// State is the named adapter's state, as Status has it, without asking
// any adapter for its status line.
func (s *Supervisor) State(name string) (adapters.State, bool) {
	for _, u := range s.units {
		if u.name == name {
			u.mu.Lock()
			defer u.mu.Unlock()
			return u.state, true
		}
	}
	return "", false
}

// Status is a snapshot of every adapter, sorted by name.
func (s *Supervisor) Status() []adapters.Status {
	out := make([]adapters.Status, 0, len(s.units))
	for _, u := range s.units {
		var st adapters.Status
		if u.adapter != nil {
			st = u.adapter.Status()
		}
		u.mu.Lock()
		st.Name, st.State, st.Restarts, st.LastError = u.name, u.state, u.restarts, u.lastErr
		if u.state == adapters.StateFailed {
			st.Fix, st.RetryAt = u.fix, u.retryAt
		}
		// The ports last reported ready, while they are served: a failed
		// or restarting adapter's are closed, and nothing may dial them.
		if len(st.Ports) == 0 && u.state == adapters.StateRunning {
			st.Ports = slices.Clone(u.ports)
		}
		if st.Note == "" {
			st.Note = u.note
		}
		u.mu.Unlock()
		act := s.opts.Lifecycle.Activity(u.name)
		if act.LastAgent.After(st.LastActivity) {
			st.LastActivity = act.LastAgent
		}
		if act.LastPage.After(st.LastActivity) {
			st.LastActivity = act.LastPage
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
