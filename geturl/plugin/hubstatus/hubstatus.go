// Package hubstatus is geturl's built-in "hub-status" plugin: one read
// tool, hub_status, that reports the state of every adapter of the hub
// geturl runs in (what `hub status` shows). It is small on purpose: it
// proves the plugin path end to end (discovery, classification, the call,
// the answer) without any outside service. When geturl runs alone (`hub
// geturl serve`) it reports the hub running beside it, or says there is
// none.
package hubstatus

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/geturl/plugin"
)

// ID is the plugin id agents name in plugin=.
const ID = "hub-status"

// Tool is the plugin's one tool.
const Tool = "hub_status"

// Error codes.
const (
	CodeInvalidArguments = "invalid_arguments"
	CodeUnknownTool      = "unknown_tool"
	CodeUnknownAdapter   = "unknown_adapter"
)

// Plugin reports the hub's adapters. Hub returns the current view of the
// hub, nil when geturl runs alone; it is read per call because the
// adapter learns it only when it starts serving.
type Plugin struct {
	Hub func() adapters.HubView
}

var _ plugin.Plugin = (*Plugin)(nil)

// New returns the plugin.
func New(hub func() adapters.HubView) *Plugin { return &Plugin{Hub: hub} }

func (p *Plugin) view() adapters.HubView {
	if p.Hub == nil {
		return nil
	}
	return p.Hub()
}

// ID implements plugin.Plugin.
func (p *Plugin) ID() string { return ID }

// Description implements plugin.Plugin.
func (p *Plugin) Description() string {
	return "the state of the hub's adapters (what `hub status` shows)"
}

// Status implements plugin.Plugin.
func (p *Plugin) Status(context.Context) string {
	if v := p.view(); v == nil || len(v.Status()) == 0 {
		return "standalone"
	}
	return "ready"
}

var schema = json.RawMessage(`{"type":"object","properties":{"adapter":{"type":"string","description":"only this adapter (e.g. aiui); all when left out"}},"additionalProperties":false}`)

// Tools implements plugin.Plugin.
func (p *Plugin) Tools() []plugin.Tool {
	return []plugin.Tool{{Name: Tool, Description: "every adapter's state, ports, attached page, agent sessions, last activity, restarts and note", InputSchema: schema}}
}

type args struct {
	Adapter string `json:"adapter"`
}

func parse(tool string, raw json.RawMessage) (args, error) {
	var a args
	if tool != Tool {
		return a, plugin.Errorf(CodeUnknownTool, false, "tool %q (the only tool is %s)", tool, Tool)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, plugin.Errorf(CodeInvalidArguments, false, "arguments: %v", err)
	}
	return a, nil
}

// Classify implements plugin.Plugin: the tool only reads.
func (p *Plugin) Classify(tool string, raw json.RawMessage) (bool, error) {
	_, err := parse(tool, raw)
	return false, err
}

type answer struct {
	Standalone bool              `json:"standalone"`
	Adapters   []adapters.Status `json:"adapters"`
	Note       string            `json:"note,omitempty"`
}

// Call implements plugin.Plugin. It needs no authority beyond reading.
func (p *Plugin) Call(_ context.Context, _ plugin.Authority, tool string, raw json.RawMessage) (json.RawMessage, error) {
	a, err := parse(tool, raw)
	if err != nil {
		return nil, err
	}
	var all []adapters.Status
	if v := p.view(); v != nil {
		all = v.Status()
	}
	if len(all) == 0 { // geturl itself is one of the adapters of a hub it runs in
		return json.Marshal(answer{Standalone: true, Adapters: []adapters.Status{},
			Note: "geturl runs alone (hub geturl serve) and no hub runs beside it: there are no adapters to report"})
	}
	out := answer{Adapters: []adapters.Status{}}
	for _, s := range all {
		if a.Adapter != "" && s.Name != a.Adapter {
			continue
		}
		// an adapter's error or note may name files under the operator's home
		s.LastError, s.Note = RedactPaths(s.LastError), RedactPaths(s.Note)
		out.Adapters = append(out.Adapters, s)
	}
	if a.Adapter != "" && len(out.Adapters) == 0 {
		return nil, plugin.Errorf(CodeUnknownAdapter, false, "no adapter %q in this hub", a.Adapter)
	}
	return json.Marshal(out)
}

// absPath finds absolute host paths in free text (an adapter's last error
// may name a file under the operator's home).
var absPath = regexp.MustCompile(`(^|[\s"'=(\[,])(/[^\s"'),:\]]+)`)

// RedactPaths replaces absolute paths with "…": the agent learns what
// failed, not where the operator keeps things.
func RedactPaths(s string) string {
	return absPath.ReplaceAllString(s, "${1}…")
}
