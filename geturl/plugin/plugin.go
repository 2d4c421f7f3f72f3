// Package plugin is the contract between geturl's plugin host and the
// plugins it runs behind the generic /k route: a plugin lists its tools,
// classifies each call as a read or a mutation (mutations are journaled
// and deduplicated by the host before the plugin sees them), and runs a
// call under the calling session's Authority, which it may narrow but
// never widen.
package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Authority is the ceiling of one call: the calling session generation's
// canonical project root and permissions. Plugins are shared by every
// session; authority is not.
type Authority struct {
	// Root is the canonical host path of the project. A plugin must keep
	// host paths out of what it returns.
	Root     string
	Write    bool
	Terminal bool
	// Bridges is the project's opt-in to the hub's bridges: a plugin that
	// drives a browser page (Gated) admits only an authority that has it.
	Bridges bool
}

// Narrow returns the authority both a and b allow: the deeper root (when
// one contains the other; otherwise nothing is allowed and ok is false)
// and each permission only when both grant it. A plugin uses it to apply
// a limit of its own without ever exceeding what the session has.
func (a Authority) Narrow(b Authority) (Authority, bool) {
	out := Authority{Write: a.Write && b.Write, Terminal: a.Terminal && b.Terminal, Bridges: a.Bridges && b.Bridges}
	switch {
	case Contains(a.Root, b.Root):
		out.Root = b.Root
	case Contains(b.Root, a.Root):
		out.Root = a.Root
	default:
		return Authority{}, false
	}
	return out, true
}

// Contains reports whether path p is root or lies under it (both clean,
// absolute host paths).
func Contains(root, p string) bool {
	if root == "" || p == "" {
		return false
	}
	root, p = filepath.Clean(root), filepath.Clean(p)
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator)) || root == string(filepath.Separator)
}

// Tool is one tool a plugin offers, as /k?plugin=<id> shows it.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Mutation says whether any action of the tool mutates; per-call
	// classification is Classify's job.
	Mutation bool `json:"mutation"`
}

// Plugin is one installed integration.
type Plugin interface {
	// ID is the stable plugin id used in plugin=<id>.
	ID() string
	// Description is one line for /k.
	Description() string
	// Status is a short state for /k and the control page, e.g. "ready",
	// "needs-auth", "offline"; it must not block on the network for long.
	Status(ctx context.Context) string
	// Tools lists the plugin's tools.
	Tools() []Tool
	// Classify decides, before anything runs, whether a call of tool with
	// args is a mutation. Invalid calls (unknown tool or action, wrong
	// types) are refused here with an *Error.
	Classify(tool string, args json.RawMessage) (mutation bool, err error)
	// Call runs tool with args under auth. For a mutation the host calls it
	// at most once per intent. The result is JSON for the agent.
	Call(ctx context.Context, auth Authority, tool string, args json.RawMessage) (json.RawMessage, error)
}

// Conditional is implemented by a plugin that exists only some of the
// time: a hub bridge's, while geturl runs under a hub that has the bridge
// enabled. While Present is false the host neither lists nor runs it, as
// if it were not installed. Present must be cheap.
type Conditional interface {
	Present() bool
}

// Gated is implemented by a plugin that some sessions may not reach at
// all, whatever the call: a hub bridge, whose page's tools can do anything
// the page can, needs the project's bridges opt-in. Admit returns nil when
// auth may use the plugin, else the *Error every use of it answers; the
// host neither lists the plugin to, nor classifies or runs a call for, a
// session it does not admit. Admit must be cheap and must not block.
type Gated interface {
	Admit(auth Authority) error
}

// Open is implemented by a plugin whose tools come and go with a page:
// the host passes it calls of tools it does not list now, so its Classify
// can say why (the page is offline, the page does not know the tool)
// instead of the host's generic unknown_tool.
type Open interface {
	TakesUnlisted() bool
}

// Error is a structured refusal a plugin returns; the host serves it as
// the agent-facing error shape (errorCode, errorDetail, repairHint,
// retryable).
type Error struct {
	Code      string
	Detail    string
	Hint      string
	Retryable bool
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Code
	}
	return e.Code + ": " + e.Detail
}

// Errorf builds an *Error with a formatted detail.
func Errorf(code string, retryable bool, format string, a ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, a...), Retryable: retryable}
}
