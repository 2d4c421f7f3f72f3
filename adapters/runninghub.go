package adapters

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hubdev/hub/hub"
)

// CommandEnv is what a bridge's command group needs of the binary it runs
// in, handed to Factory.Command explicitly: cmd/hub builds one for every
// group, a test its own. Its zero value sees no hub.
type CommandEnv struct {
	// RunningHub reports the adapters of the hub running for this user,
	// so that a client or a standalone bridge started from a shell beside
	// a hub uses what the hub runs instead of starting a second copy
	// nobody can reach. Nil: no hub is ever seen.
	RunningHub RunningHub
	// Remote reaches a running hub's adapter from this process: the
	// registry's Remote hooks (Registry.Remote). Nil: none is reached.
	Remote RemoteBridges
}

// RunningHub reports the adapters of the hub running for this user, as
// `hub status` shows them, or none when no hub runs.
type RunningHub func(ctx context.Context) ([]Status, error)

// RemoteBridges returns the ToolBridge that reaches, from another process,
// the adapter name that a running hub reports as st (running, with its
// ports); ok is false for an adapter that has none.
type RemoteBridges func(name string, st Status) (b ToolBridge, ok bool)

// RemoteEnv is what a Factory's Remote hook gets from the process that
// reaches the running hub's adapter.
type RemoteEnv struct {
	// Dirs are this process's; the hub running for this user has the same.
	Dirs hub.Dirs
}

// hubLookupTimeout bounds asking a hub that does not answer.
const hubLookupTimeout = 2 * time.Second

// HubAdapter is the running hub's adapter name when a hub runs it (state
// running, with its ports). Anything else, including a hub that cannot be
// asked, is "not running": the caller goes on as if no hub ran.
func (e CommandEnv) HubAdapter(ctx context.Context, name string) (Status, bool) {
	if e.RunningHub == nil {
		return Status{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, hubLookupTimeout)
	defer cancel()
	all, err := e.RunningHub(ctx)
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

// HubView is the hub running for this user as a HubView, for an adapter
// run alone beside it (`hub geturl serve`): its adapters' status lines and
// its bridges, reached from this process. While no hub runs it reports no
// adapters and no bridges; one started later is seen from then on. Nil
// when e has no RunningHub or no Remote.
func (e CommandEnv) HubView() HubView {
	if e.RunningHub == nil || e.Remote == nil {
		return nil
	}
	return &runningHubView{status: e.RunningHub, bridges: e.Remote, cached: map[string]cachedBridge{}}
}

// runningHubView asks the hub for every use, so a hub started or stopped
// meanwhile is seen at once (asking costs a pidfile read and a loopback
// request).
type runningHubView struct {
	status  RunningHub
	bridges RemoteBridges

	mu     sync.Mutex
	cached map[string]cachedBridge // by adapter name
}

// cachedBridge is a bridge built for one status line, kept while the
// adapter keeps its ports and directory (its connections are reused).
type cachedBridge struct {
	ports []int
	dir   string
	b     ToolBridge
}

// Status implements HubView.
func (v *runningHubView) Status() []Status {
	ctx, cancel := context.WithTimeout(context.Background(), hubLookupTimeout)
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
		if c, ok := v.cached[name]; ok && slices.Equal(c.ports, st.Ports) && c.dir == st.Dir {
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
		v.cached[name] = cachedBridge{slices.Clone(st.Ports), st.Dir, b}
		return b, true
	}
	return nil, false
}
