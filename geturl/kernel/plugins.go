package kernel

import (
	"context"
	"encoding/json"

	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/staging"
	"github.com/hubdev/hub/geturl/transport"
)

// PluginSummary is one installed plugin as /k lists it.
type PluginSummary struct {
	ID          string `json:"id"`
	Description string `json:"description,omitempty"`
	Status      string `json:"status,omitempty"`
	Tools       int    `json:"tools"`
}

// PluginTool is one tool's schema as /k?plugin=<id> returns it.
type PluginTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Mutation    bool            `json:"mutation"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// Plugins is the catalog /k discovers: every installed plugin, as the
// operator sees them (a PluginGate narrows it per session). The plugin
// host implements it, and PluginCaller for calls; without one no plugin
// is installed.
type Plugins interface {
	List() []PluginSummary
	Tools(id string) ([]PluginTool, bool)
}

// PluginCaller is implemented by a catalog that runs tool calls (the
// plugin host). The /k handler has already checked that the plugin and
// the tool exist (the tool only unless the caller is an UnlistedCaller
// that takes it); the caller classifies the call, repairs a call on the
// wrong capability base, and runs it (mutations through the journal).
type PluginCaller interface {
	CallTool(ctx context.Context, c *Call, plugin, tool string) (any, *transport.Error)
}

// UnlistedCaller is implemented by a PluginCaller some of whose plugins
// take calls of tools they do not list now (a hub bridge whose page is
// offline answers why): the /k handler passes such a call on instead of
// refusing it as unknown_tool.
type UnlistedCaller interface {
	PluginCaller
	TakesUnlisted(plugin string) bool
}

// PluginReplayer is implemented by a PluginCaller that journals plugin
// mutations: ReplayTool answers a call on the mutation base from the
// journal when this generation already holds it (held), before the /k
// handler looks the plugin or the tool up, so a journaled URL fetched
// again learns its outcome even while the plugin is gone or its page
// lists nothing. Nothing runs and nothing is recorded.
type PluginReplayer interface {
	ReplayTool(ctx context.Context, c *Call, plugin, tool string) (res any, held bool, terr *transport.Error)
}

// PluginGate is implemented by a catalog some of whose plugins only some
// sessions may reach (a hub bridge needs its project's bridges opt-in).
// The /k handler lists to a session only what ListFor gives it, and asks
// Gate before any other use of a plugin — its schemas, a call, a replay —
// answering Gate's refusal instead; Gate is nil for a plugin the session
// may reach and for one that does not exist (the handler says so).
type PluginGate interface {
	ListFor(s Session) []PluginSummary
	Gate(s Session, id string) *transport.Error
}

type noPlugins struct{}

func (noPlugins) List() []PluginSummary             { return nil }
func (noPlugins) Tools(string) ([]PluginTool, bool) { return nil, false }

// pluginSpec is the whole /k grammar, tool calls included: the JSON
// arguments in the raw tail or a staged blob, and the journal's controls
// for mutation calls.
var pluginSpec = &transport.Spec{
	Route: "/k",
	Params: []transport.Param{
		{Name: "plugin", MaxLen: 128},
		{Name: "tool", MaxLen: 128},
		{Name: "blob", MaxLen: 64, Check: staging.CheckName}, // as on /w /e /a /x
		{Name: "count", Kind: transport.Int, Min: 1, Max: staging.MaxChunks},
		transport.WaitParam(), transport.RunParam(), transport.CallParam(),
	},
	Raw:        true,
	RawMeaning: "the tool's JSON arguments",
	Groups: []transport.Group{
		{Names: []string{"raw", "blob"}, Code: transport.CodeConflictingContent},
		{Names: []string{"call", "run"}},
	},
	// wait, run and call steer a call's intent: a listing or a schema
	// has none, and strict binding refuses what it would ignore.
	Requires: [][2]string{{"tool", "plugin"}, {"raw", "tool"}, {"blob", "tool"}, {"count", "blob"},
		{"wait", "tool"}, {"run", "tool"}, {"call", "tool"}},
}

type pluginList struct {
	OK      bool            `json:"ok"`
	Plugins []PluginSummary `json:"plugins"`
}

type pluginSchema struct {
	OK     bool         `json:"ok"`
	Plugin string       `json:"plugin"`
	Tools  []PluginTool `json:"tools"`
}

// plugin answers /k: the installed plugins, one plugin's tool schemas, or
// a tool call, which the catalog runs when it is a PluginCaller.
func (k *Kernel) plugin(ctx context.Context, c *Call) (any, *transport.Error) {
	gate, gated := k.plugins.(PluginGate)
	if !c.Args.Has("plugin") {
		var list []PluginSummary
		if gated {
			list = gate.ListFor(c.Session)
		} else {
			list = k.plugins.List()
		}
		if list == nil {
			list = []PluginSummary{}
		}
		return pluginList{OK: true, Plugins: list}, nil
	}
	id := c.Args.Text("plugin")
	if gated {
		if terr := gate.Gate(c.Session, id); terr != nil {
			return nil, terr
		}
	}
	if r, ok := k.plugins.(PluginReplayer); ok && c.On == MutationBase && c.Args.Has("tool") {
		if res, held, terr := r.ReplayTool(ctx, c, id, c.Args.Text("tool")); held {
			return res, terr
		}
	}
	tools, ok := k.plugins.Tools(id)
	if !ok {
		return nil, &transport.Error{
			Code: CodeUnknownPlugin, Detail: "plugin=" + id, Retryable: true,
			Hint: "GET " + c.URL("/k", nil) + " lists the installed plugins", Action: fault.ActionCorrectRequest,
		}
	}
	if name := c.Args.Text("tool"); name != "" {
		for _, t := range tools {
			if t.Name == name {
				if caller, ok := k.plugins.(PluginCaller); ok {
					return caller.CallTool(ctx, c, id, name)
				}
				return nil, &transport.Error{Code: CodePluginCallsUnavailable, Detail: "plugin=" + id + " tool=" + name}
			}
		}
		if u, ok := k.plugins.(UnlistedCaller); ok && u.TakesUnlisted(id) {
			return u.CallTool(ctx, c, id, name)
		}
		return nil, &transport.Error{
			Code: CodeUnknownTool, Detail: "plugin=" + id + " tool=" + name, Retryable: true, Action: fault.ActionCorrectRequest,
			Hint: "GET " + c.URL("/k", new(transport.Query).Add("plugin", id)) + " lists its tools",
		}
	}
	if tools == nil {
		tools = []PluginTool{}
	}
	return pluginSchema{OK: true, Plugin: id, Tools: tools}, nil
}
