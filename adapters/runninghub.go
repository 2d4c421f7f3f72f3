package adapters

import (
	"context"
	"slices"
	"sync"
	"time"
)

// RunningHub reports the adapters of the hub running for this user, as
// `hub status` shows them, or none when no hub runs. cmd/hub puts one in
// every command's context, so that a client or a standalone bridge
// started from a shell beside a hub uses what the hub runs instead of
// starting a second copy nobody can reach.
type RunningHub func(ctx context.Context) ([]Status, error)

type runningHubKey struct{}

// WithRunningHub makes f what HubAdapter asks.
func WithRunningHub(ctx context.Context, f RunningHub) context.Context {
	return context.WithValue(ctx, runningHubKey{}, f)
}

// hubLookupTimeout bounds asking a hub that does not answer.
const hubLookupTimeout = 2 * time.Second

// HubAdapter is the running hub's adapter name when a hub runs it (state
// running, with its ports). Anything else, including a hub that cannot be
// asked, is "not running": the caller goes on as if no hub ran.
func HubAdapter(ctx context.Context, name string) (Status, bool) {
	f, _ := ctx.Value(runningHubKey{}).(RunningHub)
	if f == nil {
		return Status{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, hubLookupTimeout)
	defer cancel()
	all, err := f(ctx)
	if err != nil {
		return Status{}, false
	}
	for _, st := range all {
		if st.Name == name && st.State == StateRunning && len(st.Ports) > 0 {
			return st, true
		}
	}
	return Status{}, false
}

// RemoteBridges returns the ToolBridge that reaches, from another process,
// the adapter name that a running hub reports as st (running, with its
// ports): through the bridge's own control plane, as its shell client
// does. ok is false for an adapter that has none.
type RemoteBridges func(name string, st Status) (b ToolBridge, ok bool)

type remoteBridgesKey struct{}

// WithRemoteBridges makes f what RunningHubView's Bridge uses.
func WithRemoteBridges(ctx context.Context, f RemoteBridges) context.Context {
	return context.WithValue(ctx, remoteBridgesKey{}, f)
}

// RunningHubView is the hub running for this user as a HubView, for an
// adapter run alone beside it (`hub geturl serve`): its adapters' status
// lines and its bridges, reached from this process. While no hub runs it
// reports no adapters and no bridges; one started later is seen from then
// on. Nil when ctx carries no RunningHub or RemoteBridges.
func RunningHubView(ctx context.Context) HubView {
	status, _ := ctx.Value(runningHubKey{}).(RunningHub)
	bridges, _ := ctx.Value(remoteBridgesKey{}).(RemoteBridges)
	if status == nil || bridges == nil {
		return nil
	}
	return &runningHubView{ctx: context.WithoutCancel(ctx), status: status, bridges: bridges, cached: map[string]cachedBridge{}}
}

// runningHubView asks the hub for every use, so a hub started or stopped
// meanwhile is seen at once (asking costs a pidfile read and a loopback
// request).
type runningHubView struct {
	ctx     context.Context
	status  RunningHub
	bridges RemoteBridges

	mu     sync.Mutex
	cached map[string]cachedBridge // by adapter name
}

// cachedBridge is a bridge built for one status line, kept while the
// adapter keeps its ports (its connections are reused).
type cachedBridge struct {
	ports []int
	b     ToolBridge
}

// Status implements HubView.
func (v *runningHubView) Status() []Status {
	ctx, cancel := context.WithTimeout(v.ctx, hubLookupTimeout)
	defer cancel()
	all, err := v.status(ctx)
	if err != nil {
		return nil
	}
	return all
}

// Bridge implements HubView.
func (v *runningHubView) Bridge(name string) (ToolBridge, bool) {
	for _, st := range v.Status() {
		if st.Name != name || st.State != StateRunning || len(st.Ports) == 0 {
			continue
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		if c, ok := v.cached[name]; ok && slices.Equal(c.ports, st.Ports) {
			return c.b, true
		}
		if c, ok := v.cached[name].b.(interface{ Close() }); ok {
			c.Close() // the adapter moved: let that bridge's connections go
		}
		delete(v.cached, name)
		b, ok := v.bridges(name, st)
		if !ok {
			return nil, false
		}
		v.cached[name] = cachedBridge{slices.Clone(st.Ports), b}
		return b, true
	}
	return nil, false
}
