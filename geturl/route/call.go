package route

import (
	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/transport"
)

// Call is one request on its way through a route.
type Call struct {
	Session Session
	Bases   Bases
	// On is the base kind the request arrived on (ReadBase or MutationBase).
	On    BaseKind
	Route *Entry
	Args  *transport.Args
	// Head is set for HEAD requests: the agent sees no body, so nothing it
	// "read" may count as read coverage.
	Head bool
	// Target is the request as written, for recovery URLs that must
	// repeat it exactly with one control parameter changed (retry and
	// repeat carry a new run=).
	Target *transport.Target

	// Set by journaled handlers, for the activity view: the intent's call
	// id, and whether this request replayed an existing intent.
	Intent   string
	Replayed bool
}

// StoresAnswer reports whether the call's JSON answer goes into the
// session's replay store and becomes what /z?last=1 reads: not for HEAD
// (the agent saw no body), not for /z itself, whose answers, errors
// included, never replace the last pointer, and not for a route that does
// not exist (Route nil): a mistyped /Z?last=1 must not replace the answer
// it meant to recover with its own short unknown_route.
func (c *Call) StoresAnswer() bool {
	return !c.Head && c.Session.Replay() != nil && c.Route != nil && c.Route.Path != "/z"
}

// Base is the exact base the call arrived on.
func (c *Call) Base() string { return c.Bases.Of(c.On) }

// URL builds an exact URL on the call's base.
func (c *Call) URL(route string, q *transport.Query) string {
	return transport.URL(c.Base(), route, q)
}

// Level is the replay level of the call's base: what it may store and
// read back (replay.Level). An answer from the mutation base is never
// replayed through the read base.
func (c *Call) Level() replay.Level {
	if c.On == MutationBase {
		return replay.MutationLevel
	}
	return replay.ReadLevel
}
