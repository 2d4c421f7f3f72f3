package route

import (
	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// Permissions are a session generation's rights, inherited from its
// project: the mutation rights, and whether /k reaches the hub's bridges.
type Permissions struct {
	Write    bool `json:"write"`
	Terminal bool `json:"terminal"`
	// Bridges lets the session reach the hub's bridges (a browser page's
	// tools) as /k plugins. A project grants it only together with Write:
	// a page's tool can do anything the page can.
	Bridges bool `json:"bridges,omitempty"`
}

// Mutations reports whether the session has a mutation capability at all.
func (p Permissions) Mutations() bool { return p.Write || p.Terminal }

// Session is the view of one session generation the kernel needs. The
// session package implements it; tests use small structs.
type Session interface {
	Scope() *sandbox.Scope
	Permissions() Permissions
	// Replay is the generation's /z store.
	Replay() *replay.Store
	// Coverage records what /r returned, for whole-file overwrite checks.
	Coverage() Coverage
}

// Bases are the exact URL prefixes (scheme, host, /v0/<token>) of a
// session's capabilities, as the agent reaches them. Mutation is "" when the
// session has no mutation capability.
type Bases struct {
	Read     string `json:"r"`
	Mutation string `json:"m,omitempty"`
}

// Of returns the base of a capability kind.
func (b Bases) Of(k BaseKind) string {
	if k == MutationBase {
		return b.Mutation
	}
	return b.Read
}
