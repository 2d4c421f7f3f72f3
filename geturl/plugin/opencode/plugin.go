package opencode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/plugin"
	"github.com/hubdev/hub/hub"
)

// ID is the plugin id agents name in plugin=.
const ID = "opencode-control"

// Options are the plugin's injectable dependencies; zero values use the
// real ones.
type Options struct {
	// Now is the clock for ids and wait deadlines.
	Now func() time.Time
	// Sleep waits between polls; it returns early with ctx's error.
	Sleep func(ctx context.Context, d time.Duration) error
	// Owner finds the process behind the port (Linux /proc by default).
	Owner ProcessOwner
	// Peer finds who holds the far end of each connection (the kernel's
	// socket table by default).
	Peer PeerOwner
	// PollInterval is the wait/turn poll period (default 300ms).
	PollInterval time.Duration
}

// Plugin is the OpenCode Control plugin. It is shared by every geturl
// session; each call brings its own Authority.
type Plugin struct {
	cfg    Config
	client *client // nil when the url is not loopback: every call refuses
	urlErr error
	now    func() time.Time
	sleep  func(ctx context.Context, d time.Duration) error
	poll   time.Duration
	ids    *idGen

	mu      sync.Mutex
	groups  map[string]string // canonical root -> group session id
	workers map[string]string // worker id -> host directory, for admission
	pending int               // admitted starts not yet visible as busy
}

var _ plugin.Plugin = (*Plugin)(nil)

// New builds the plugin. It never touches the network; a non-loopback url
// makes every call answer a structured refusal rather than failing here,
// so a bad setting cannot stop the hub.
func New(cfg Config, o Options) *Plugin {
	p := &Plugin{cfg: cfg, now: o.Now, sleep: o.Sleep, poll: o.PollInterval,
		groups: map[string]string{}, workers: map[string]string{}}
	if p.now == nil {
		p.now = time.Now
	}
	if p.sleep == nil {
		p.sleep = func(ctx context.Context, d time.Duration) error {
			if !hub.Sleep(ctx, d) {
				return ctx.Err()
			}
			return nil
		}
	}
	if p.poll <= 0 {
		p.poll = 300 * time.Millisecond
	}
	p.ids = &idGen{now: p.now}
	p.client, p.urlErr = newClient(cfg, o.Owner, o.Peer)
	return p
}

// ID implements plugin.Plugin.
func (p *Plugin) ID() string { return ID }

// Description implements plugin.Plugin.
func (p *Plugin) Description() string {
	return "OpenCode Control: sessions, permission-narrowed workers and swarms, models, permission and question walls of a loopback OpenCode server"
}

// Tools implements plugin.Plugin.
func (p *Plugin) Tools() []plugin.Tool { return toolList }

// Classify implements plugin.Plugin: the action decides.
func (p *Plugin) Classify(tool string, raw json.RawMessage) (bool, error) {
	_, mutation, err := parseArgs(tool, raw)
	return mutation, err
}

// Status implements plugin.Plugin for /k's plugin listing: the state of
// the last call's connection, or before any, what a credential-free probe
// shows (with a short deadline). It never sends the credential.
func (p *Plugin) Status(ctx context.Context) string {
	if !p.cfg.Enabled {
		return StateDisabled
	}
	if p.client == nil {
		return "misconfigured"
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return p.client.listingState(ctx)
}

// Call implements plugin.Plugin.
func (p *Plugin) Call(ctx context.Context, auth plugin.Authority, tool string, raw json.RawMessage) (json.RawMessage, error) {
	a, mutation, err := parseArgs(tool, raw)
	if err != nil {
		return nil, err
	}
	if !p.cfg.Enabled {
		return nil, &plugin.Error{Code: CodeDisabled, Detail: "the OpenCode plugin is disabled (GETMCP_OPENCODE_ENABLED=false)"}
	}
	if p.client == nil {
		return nil, &plugin.Error{Code: CodeNotLoopback, Detail: "GETMCP_OPENCODE_URL " + p.urlErr.Error(),
			Hint: "the operator sets GETMCP_OPENCODE_URL to a loopback origin such as http://127.0.0.1:4096"}
	}
	c := &call{p: p, auth: auth, a: a, mutation: mutation}
	if c.scope, err = scopeOf(auth); err != nil {
		return nil, err
	}
	var out any
	switch tool {
	case ToolInfo:
		out, err = c.info(ctx)
	case ToolSession:
		out, err = c.session(ctx)
	case ToolWorker:
		out, err = c.worker(ctx)
	case ToolRequest:
		out, err = c.request(ctx)
	}
	if err != nil {
		return nil, redactError(c.scope, toolError(err))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	// The last line of defence: no host path of the project leaves.
	return json.RawMessage(c.scope.Redact(string(b))), nil
}

// call is one tool call's context.
type call struct {
	p        *Plugin
	auth     plugin.Authority
	scope    *sandbox.Scope
	a        args
	mutation bool
}

func (c *call) client() *client { return c.p.client }

func scopeOf(auth plugin.Authority) (*sandbox.Scope, error) {
	if auth.Root == "" {
		return nil, &plugin.Error{Code: CodeForbidden, Detail: "the call carries no project root"}
	}
	s, err := sandbox.New(auth.Root)
	if err != nil {
		return nil, &plugin.Error{Code: CodeForbidden, Detail: "the project root is not available"}
	}
	return s, nil
}

func redactError(s *sandbox.Scope, err error) error {
	if pe, ok := err.(*plugin.Error); ok {
		cp := *pe
		cp.Detail, cp.Hint = s.Redact(cp.Detail), s.Redact(cp.Hint)
		return &cp
	}
	return err
}

// workdir resolves the workdir argument (default the root) to an existing
// directory inside the scope.
func (c *call) workdir() (sandbox.Path, error) {
	w := c.a.Workdir
	if w == "" {
		w = sandbox.VirtualRoot
	}
	p, err := c.scope.ResolveExisting(w)
	if err != nil {
		return sandbox.Path{}, plugin.Errorf(CodeInvalidArguments, false, "workdir %s: %v", c.scope.Display(w), err)
	}
	if fi, err := os.Stat(p.Host); err != nil || !fi.IsDir() {
		return sandbox.Path{}, plugin.Errorf(CodeInvalidArguments, false, "workdir %s is not a directory", p.Virtual)
	}
	return p, nil
}

// visible maps a session's working directory into the scope: its
// canonical path (symlinks resolved) must lie inside the root. A directory
// that no longer exists cannot be canonicalised and is not visible.
func (c *call) visible(s ocSession) (string, bool) {
	if s.Directory == "" || !filepath.IsAbs(s.Directory) {
		return "", false
	}
	real, err := filepath.EvalSymlinks(s.Directory)
	if err != nil {
		return "", false
	}
	v := c.scope.Virtual(real)
	return v, v != ""
}

// authority refuses unless the call has write and terminal.
func (c *call) needWriteTerminal(what string) error {
	if c.auth.Write && c.auth.Terminal {
		return nil
	}
	return &plugin.Error{Code: CodeForbidden, Detail: what + " needs both write and terminal permission on this project",
		Hint: "an existing session keeps its own OpenCode permissions, so prompting it is as strong as write plus terminal"}
}

func trimTitle(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = cutUTF8(s, 60) + "…"
	}
	return s
}
