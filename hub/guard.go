package hub

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
)

// PanicError is a recovered panic, with where it happened and its stack.
type PanicError struct {
	Where string // "Serve", "timer auth", "websocket open", …
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v (in %s)", e.Value, e.Where) }

// A Guard runs the goroutines and callbacks one adapter run starts outside
// its Serve: timers, background work, WebSocket callbacks. A panic in one
// would otherwise kill the whole process, every other adapter with it.
// The guard recovers it, logs it with its stack, and reports it to its
// owner — the supervisor, which ends that adapter's run and restarts it
// with backoff while the others serve on.
//
// A nil *Guard (code running outside any supervisor, such as a shell
// client) runs things plainly: a panic is not swallowed.
//
// Not under a guard, on purpose: the hub's own plumbing, which runs no
// adapter code (a socket's read loop, whose handler callbacks are each
// recovered; heartbeat timers; ServeHTTP's server goroutine, where
// net/http recovers a handler's panic itself); the supervisor and the CLI;
// and processes with no adapter run to restart — an MCP face (`hub
// <adapter> mcp`, a stitchslop face following another bridge) and `hub
// mcp`, whose goroutines go through Go with a context that carries no
// guard, and so run plainly.
type Guard struct {
	log     *slog.Logger
	onPanic func(*PanicError)
}

// NewGuard reports each recovered panic to onPanic after logging it.
func NewGuard(log *slog.Logger, onPanic func(*PanicError)) *Guard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Guard{log: log, onPanic: onPanic}
}

// Go runs fn on a new goroutine under the guard.
func (g *Guard) Go(where string, fn func()) {
	if g == nil {
		go fn()
		return
	}
	go func() {
		defer g.Recover(where)
		fn()
	}()
}

// AfterFunc is time.AfterFunc with fn run under the guard.
func (g *Guard) AfterFunc(where string, d time.Duration, fn func()) *time.Timer {
	if g == nil {
		return time.AfterFunc(d, fn)
	}
	return time.AfterFunc(d, func() {
		defer g.Recover(where)
		fn()
	})
}

// Recover must be deferred directly (defer g.Recover("…")): it stops a
// panic of the calling goroutine and handles it as the guard does. On a
// nil guard it does nothing, and the panic goes on.
func (g *Guard) Recover(where string) {
	if g == nil {
		return
	}
	if r := recover(); r != nil {
		g.Handle(&PanicError{Where: where, Value: r, Stack: debug.Stack()})
	}
}

// Handle logs a panic recovered elsewhere and reports it.
func (g *Guard) Handle(pe *PanicError) {
	if g == nil {
		return
	}
	g.log.Error("panic outside Serve; the adapter will restart", "in", pe.Where, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
	if g.onPanic != nil {
		g.onPanic(pe)
	}
}

type guardKey struct{}

// WithGuard returns ctx carrying g, for code that has a context but no
// Env (ServeHTTP hands it to its Sockets; Go and AfterFunc find it).
func WithGuard(ctx context.Context, g *Guard) context.Context {
	return context.WithValue(ctx, guardKey{}, g)
}

// GuardFrom returns the guard ctx carries, or nil.
func GuardFrom(ctx context.Context) *Guard {
	g, _ := ctx.Value(guardKey{}).(*Guard)
	return g
}

// Go runs fn on a new goroutine under ctx's guard.
func Go(ctx context.Context, where string, fn func()) { GuardFrom(ctx).Go(where, fn) }

// AfterFunc is time.AfterFunc under ctx's guard.
func AfterFunc(ctx context.Context, where string, d time.Duration, fn func()) *time.Timer {
	return GuardFrom(ctx).AfterFunc(where, d, fn)
}
