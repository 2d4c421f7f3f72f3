package adapters

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// An Adapter is one protocol bridge run by the supervisor. Its name lives
// in its Factory only.
type Adapter interface {
	// Serve binds the adapter's loopback listener(s), calls env.Ready with
	// the bound ports, and serves until ctx is done. It closes every
	// connection it hijacked before returning. It returns nil after a clean
	// shutdown, an error wrapping hub.ErrIdle after an idle exit, and any
	// other error for a crash (the supervisor restarts it with backoff).
	Serve(ctx context.Context, env *Env) error
	// Status is a cheap snapshot, safe to call from any goroutine at any time.
	Status() Status
}

// Env carries the shared services to an adapter explicitly.
type Env struct {
	Log  *slog.Logger // already tagged adapter=<name>
	Dirs hub.Dirs
	// Activity records page attachments and agent activity under the
	// adapter's name, for status and the idle rules.
	Activity  hub.ActivityReporter
	Heartbeat ws.HeartbeatConfig
	// Follow paces following a bridge started outside the hub (Follow).
	Follow FollowTiming
	// Hub is what the adapter may see of the hub it runs in; nil when it
	// runs alone (`hub <adapter> serve`).
	Hub HubView
	// Ready reports the ports actually bound. Call it once per Serve, after
	// every listener is bound and before serving.
	Ready func(ports ...int)
	// Guard runs the goroutines and timer callbacks the adapter starts
	// outside Serve: a panic in one is logged with its stack and ends
	// this run, which the supervisor restarts, instead of killing the
	// process. Serve's context carries it too (hub.Go, hub.AfterFunc),
	// and hub.ServeHTTP routes WebSocket handler panics through it.
	// Nil runs things plainly.
	Guard *hub.Guard
	// Files is the hub's one FileKeeper: an adapter keeps its control,
	// session and state files on it, so an idle hub wakes once per period
	// for all of them. Nil (a bridge running alone) keeps them on a ticker
	// of the adapter's own.
	Files *hub.FileKeeper
}

// HubView is the running hub as an adapter sees it: every adapter's line
// of `hub status` (geturl's control page doubles as the hub's dashboard),
// and the other running bridges' pages as tools (geturl's /k plugins).
type HubView interface {
	Status() []Status
	// Bridge returns the named adapter as a ToolBridge while it runs in
	// this hub; ok is false when it is disabled, not running (starting,
	// restarting, failed, stopped) or no ToolBridge. Callers ask again
	// for every use: a restarted adapter is the same value, but a stopped
	// one must not be called.
	Bridge(name string) (b ToolBridge, ok bool)
}

// StateView is a HubView that can tell one adapter's state without a
// whole Status snapshot, which asks every adapter for its line (reading
// pairing files, searching PATH): a question asked on every geturl /k call.
type StateView interface {
	// State is the named adapter's state; ok is false when the hub has no
	// adapter of that name.
	State(name string) (state State, ok bool)
}

// State is where an adapter is in its life, as shown by `hub status`.
type State string

const (
	StateStarting       State = "starting"
	StateRunning        State = "running"
	StateRestarting     State = "restarting"
	StateDisabled       State = "disabled"
	StateFailed         State = "failed"
	StateIdleExited     State = "idle-exited"
	StateStopped        State = "stopped"
	StateNotImplemented State = "not implemented"
)

// Status is one adapter's line in `hub status`. Adapters fill the protocol
// facts; the supervisor fills Name, State, Restarts and LastError.
type Status struct {
	Name         string `json:"name"`
	State        State  `json:"state"`
	Ports        []int  `json:"ports,omitempty"`
	PageAttached bool   `json:"pageAttached"`
	// AgentSessions counts the agents attached or active recently.
	AgentSessions int `json:"agentSessions"`
	// Sessions, for a bridge whose agents hold sessions that outlive
	// their traffic (geturl's capability URLs), is how many are enabled:
	// each could be used, none need be in use.
	Sessions     int       `json:"sessions,omitempty"`
	LastActivity time.Time `json:"lastActivity,omitzero"`
	Restarts     int       `json:"restarts"`
	LastError    string    `json:"lastError,omitempty"`
	// Note is set when something needs the user, e.g. a missing key.
	Note string `json:"note,omitempty"`
	// Fix is, for a failed adapter, what the user can do about LastError:
	// the config keys to change (adapters.<name>.port, enabled: false).
	// The supervisor fills it.
	Fix string `json:"fix,omitempty"`
	// RetryAt is when the supervisor next tries to start an adapter that
	// failed to start; zero when no retry is pending.
	RetryAt time.Time `json:"retryAt,omitzero"`
	// Dir is what a client on this machine must know to reach the
	// adapter besides its ports, as an absolute path the adapter fills
	// in (stitchslop's config dir, where its session files are); empty
	// for an adapter that needs none. Clients read it here rather than
	// parsing the hub's config.
	Dir string `json:"dir,omitempty"`
}

// ErrNotImplemented is returned by a Factory whose protocol has not landed
// yet; the supervisor shows the adapter as "not implemented" and never runs
// fake protocol behaviour in its place.
var ErrNotImplemented = errors.New("not implemented")
