package gateway

import "github.com/hubdev/hub/geturl/route"

// Sessions finds the live session generation a token belongs to.
// Implementations must not leak through timing which tokens exist or how
// much of a token matched: compare every candidate in constant time, as
// route.TokenTable does.
type Sessions interface {
	Lookup(token string) (route.LiveSession, route.Capability, bool)
}
