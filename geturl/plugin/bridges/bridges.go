// Package bridges offers each bridge of the hub geturl runs in as a /k
// plugin: plugin=stitchslop, plugin=pixelle, plugin=aiui list the page's
// tools now and call them through the bridge in-process
// (adapters.ToolBridge, reached through adapters.HubView.Bridge).
//
// The bridge decides what its page offers and classifies every call as a
// read or a mutation; the plugin host then runs reads at once on the read
// base and journals mutations on the mutation base, so fetching the same
// URL twice never sends the page a command twice.
//
// A page's tool can do anything the page can, whatever it says of itself,
// so only a session whose project opted in to the bridges (which needs
// write) reaches one (Admit, plugin.Gated): the host lists a bridge to no
// other session and answers every other use CodeBridgesDisabled.
//
// A plugin is listed while its adapter is enabled in the hub (Present);
// geturl running alone lists those of the hub running beside it
// (adapters.CommandEnv.HubView), none while no hub runs. Its status is "ready"
// while a page is attached, "offline" while none is (its calls then answer
// BROWSER_OFFLINE), and "not running" while the adapter is starting,
// restarting, failed or stopped, or the process running the bridge is gone
// (calls answer bridge_not_running).
package bridges

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/geturl/plugin"
	"github.com/hubdev/hub/geturl/plugin/hubstatus"
)

// CodeBridgesDisabled answers every use of a bridge plugin by a session
// whose project has not opted in to the hub's bridges.
const CodeBridgesDisabled = "bridges_disabled"

// Statuses a bridge plugin reports.
const (
	StatusReady      = "ready"
	StatusOffline    = "offline"
	StatusNotRunning = "not running"
)

// CodeNotRunning answers a call while the bridge's adapter does not run.
const CodeNotRunning = adapters.CodeNotRunning

// Known are the hub's bridges and their one-line descriptions, in /k's
// order. A bridge is added here once its adapter implements
// adapters.ToolBridge.
var Known = []struct{ Name, Description string }{
	{"stitchslop", "the attached Stitch Slop tab: its tools and commands (hub bridge)"},
	{"pixelle", "the Pixelle canvas: reads, and commands journaled with their operationId (hub bridge)"},
	{"aiui", "the aiui dev pages' tools, called by name or ns/name (hub bridge)"},
}

// All returns one plugin per known bridge, reading the hub through hub.
func All(hub func() adapters.HubView) []plugin.Plugin {
	out := make([]plugin.Plugin, len(Known))
	for i, k := range Known {
		out[i] = New(k.Name, k.Description, hub)
	}
	return out
}

// Plugin is one bridge as a plugin. Hub returns the hub of geturl's
// current run (nil when it runs alone); it is read per use because geturl
// learns it only when it serves, and a bridge is looked up per use because
// it may stop and start meanwhile.
type Plugin struct {
	name, desc string
	hub        func() adapters.HubView
}

var (
	_ plugin.Plugin      = (*Plugin)(nil)
	_ plugin.Conditional = (*Plugin)(nil)
	_ plugin.Open        = (*Plugin)(nil)
	_ plugin.Gated       = (*Plugin)(nil)
)

// New returns the plugin for the bridge adapter called name.
func New(name, description string, hub func() adapters.HubView) *Plugin {
	return &Plugin{name: name, desc: description, hub: hub}
}

func (p *Plugin) view() adapters.HubView {
	if p.hub == nil {
		return nil
	}
	return p.hub()
}

func (p *Plugin) bridge() (adapters.ToolBridge, bool) {
	v := p.view()
	if v == nil {
		return nil, false
	}
	return v.Bridge(p.name)
}

// ID implements plugin.Plugin: the adapter's name.
func (p *Plugin) ID() string { return p.name }

// Description implements plugin.Plugin.
func (p *Plugin) Description() string { return p.desc }

// Present implements plugin.Conditional: the bridge is enabled in the hub
// geturl runs in (whether or not it runs right now).
func (p *Plugin) Present() bool {
	v := p.view()
	if v == nil {
		return false
	}
	enabled := func(st adapters.State) bool {
		return st != adapters.StateDisabled && st != adapters.StateNotImplemented
	}
	// Asked on every /k call: a hub that can say one adapter's state is
	// spared a status snapshot of all of them.
	if sv, ok := v.(adapters.StateView); ok {
		st, ok := sv.State(p.name)
		return ok && enabled(st)
	}
	for _, st := range v.Status() {
		if st.Name == p.name {
			return enabled(st.State)
		}
	}
	return false
}

// Admit implements plugin.Gated: a bridge drives a browser page, whose
// tools can do anything the page can (its own "read-only" hints
// included), so only a session whose project opted in to the bridges —
// which a project can do only with write — reaches it.
func (p *Plugin) Admit(auth plugin.Authority) error {
	if auth.Bridges && auth.Write {
		return nil
	}
	return &plugin.Error{Code: CodeBridgesDisabled,
		Detail: "plugin " + p.name + " is a hub bridge: it calls a browser page's tools, and this session's project does not let its sessions reach the hub's bridges",
		Hint:   "the operator can allow it with `hub geturl project set <project> --bridges` (the project needs write: a page's tool can do anything the page can)"}
}

// TakesUnlisted implements plugin.Open: the bridge answers for names it
// does not list (an offline page, a command the tab takes unlisted).
func (p *Plugin) TakesUnlisted() bool { return true }

// Status implements plugin.Plugin.
func (p *Plugin) Status(context.Context) string {
	b, ok := p.bridge()
	if !ok {
		return StatusNotRunning
	}
	_, err := b.BridgeTools()
	var te *adapters.ToolError
	switch {
	case errors.Is(err, adapters.ErrNoPage):
		return StatusOffline
	case errors.As(err, &te) && te.Code == CodeNotRunning:
		return StatusNotRunning // a bridge run elsewhere that is gone
	}
	return StatusReady
}

// Tools implements plugin.Plugin: the page's tools now (none while it is
// offline or the bridge does not run).
func (p *Plugin) Tools() []plugin.Tool {
	b, ok := p.bridge()
	if !ok {
		return nil
	}
	tools, err := b.BridgeTools()
	if err != nil {
		return nil
	}
	out := make([]plugin.Tool, len(tools))
	for i, t := range tools {
		out[i] = plugin.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Mutation: !t.Read}
	}
	return out
}

// Classify implements plugin.Plugin: the bridge's classification, or its
// refusal (no page, an unknown tool, arguments it can tell are wrong)
// before anything is journaled, so the same URL works once the page is
// back.
func (p *Plugin) Classify(tool string, args json.RawMessage) (bool, error) {
	b, err := p.running()
	if err != nil {
		return false, err
	}
	read, err := b.BridgeClassify(tool, args)
	if err != nil {
		return false, pluginError(err)
	}
	return !read, nil
}

// Call implements plugin.Plugin. A bridge drives a page, not the project:
// beyond the capability base the host has already checked (a mutation
// only runs from a mutation base), the call needs the bridges opt-in,
// which it checks again itself (Admit) whoever runs it.
func (p *Plugin) Call(ctx context.Context, auth plugin.Authority, tool string, args json.RawMessage) (json.RawMessage, error) {
	if err := p.Admit(auth); err != nil {
		return nil, err
	}
	b, err := p.running()
	if err != nil {
		return nil, err
	}
	out, err := b.BridgeCall(ctx, tool, args)
	if err != nil {
		return nil, pluginError(err)
	}
	return out, nil
}

func (p *Plugin) running() (adapters.ToolBridge, error) {
	b, ok := p.bridge()
	if !ok {
		return nil, &plugin.Error{Code: CodeNotRunning, Retryable: true,
			Detail: "the hub's " + p.name + " bridge is not running (starting, restarting, failed or stopped)",
			Hint:   "retry shortly; hub-status (plugin=hub-status) shows its state and last error"}
	}
	return b, nil
}

// pluginError keeps a bridge's structured error, with absolute paths
// taken out (a bridge's file problems name files under the operator's
// home, and the agent may read this through a tunnel); anything else is
// the host's plugin_failed.
func pluginError(err error) error {
	var te *adapters.ToolError
	if errors.As(err, &te) {
		return &plugin.Error{Code: te.Code, Detail: hubstatus.RedactPaths(te.Message), Hint: hubstatus.RedactPaths(te.Hint), Retryable: te.Retryable}
	}
	return err
}
