package adapters

import (
	"context"
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
