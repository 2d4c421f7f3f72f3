package route

import (
	"context"

	"github.com/hubdev/hub/geturl/transport"
)

// BaseKind says which capability base a route is served on.
type BaseKind uint8

const (
	// ReadBase routes inspect and never change anything.
	ReadBase BaseKind = iota
	// MutationBase routes change the project or run commands.
	MutationBase
	// AnyBase routes (/k, /z) are served on both bases.
	AnyBase
)

func (k BaseKind) String() string {
	switch k {
	case MutationBase:
		return "m"
	case AnyBase:
		return "any"
	}
	return "r"
}

// Handler runs one bound call. It returns a JSON-encodable answer (or
// PlainText), or a structured tool error.
type Handler func(ctx context.Context, c *Call) (any, *transport.Error)

// PlainText is an answer written as text/plain instead of JSON (the /z range
// answers). It is never stored for range fallback.
type PlainText []byte

// Entry is one route of the route table.
type Entry struct {
	Path   string // the compact route, "/r"
	Tool   string // the tool's name, "read"
	Base   BaseKind
	Spec   *transport.Spec
	Handle Handler // nil: declared, not served yet (answered unknown_route)
	// Init is the endpoint suffix advertised in the Init contract, "" for
	// routes Init leaves out (/z: agents receive exact /z URLs when needed).
	Init string
}

// Long is the route's long descriptive name, kept for compatibility: "/"
// and the tool's name ("/read" for /r, "/apply_patch" for /a). It is
// served on the same base, by the same handler, with the same spec, and
// answers byte for byte as the compact route does: every URL an answer
// builds names the compact route.
func (r *Entry) Long() string { return "/" + r.Tool }

// Served reports whether the route has a handler.
func (r *Entry) Served() bool { return r.Handle != nil }

// OnBase reports whether the route is served on base kind k (ReadBase or
// MutationBase).
func (r *Entry) OnBase(k BaseKind) bool { return r.Base == AnyBase || r.Base == k }
