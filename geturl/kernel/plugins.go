package kernel

import (
	"context"

	"github.com/hubdev/hub/geturl/engine/staging"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

type noPlugins struct{}

func (noPlugins) List() []route.PluginSummary             { return nil }
func (noPlugins) Tools(string) ([]route.PluginTool, bool) { return nil, false }

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
	OK      bool                  `json:"ok"`
	Plugins []route.PluginSummary `json:"plugins"`
}

type pluginSchema struct {
	OK     bool               `json:"ok"`
	Plugin string             `json:"plugin"`
	Tools  []route.PluginTool `json:"tools"`
}

// plugin answers /k: the installed plugins, one plugin's tool schemas, or
// a tool call, which the catalog runs when it is a PluginCaller.
func (k *Kernel) plugin(ctx context.Context, c *route.Call) (any, *transport.Error) {
	gate, gated := k.plugins.(route.PluginGate)
	if !c.Args.Has("plugin") {
		var list []route.PluginSummary
		if gated {
			list = gate.ListFor(c.Session)
		} else {
			list = k.plugins.List()
		}
		if list == nil {
			list = []route.PluginSummary{}
		}
		return pluginList{OK: true, Plugins: list}, nil
	}
	id := c.Args.Text("plugin")
	if gated {
		if terr := gate.Gate(c.Session, id); terr != nil {
			return nil, terr
		}
	}
	if r, ok := k.plugins.(route.PluginReplayer); ok && c.On == route.MutationBase && c.Args.Has("tool") {
		if res, held, terr := r.ReplayTool(ctx, c, id, c.Args.Text("tool")); held {
			return res, terr
		}
	}
	tools, ok := k.plugins.Tools(id)
	if !ok {
		return nil, &transport.Error{
			Code: route.CodeUnknownPlugin, Detail: "plugin=" + id, Retryable: true,
			Hint: "GET " + c.URL("/k", nil) + " lists the installed plugins", Action: fault.ActionCorrectRequest,
		}
	}
	if name := c.Args.Text("tool"); name != "" {
		for _, t := range tools {
			if t.Name == name {
				if caller, ok := k.plugins.(route.PluginCaller); ok {
					return caller.CallTool(ctx, c, id, name)
				}
				return nil, &transport.Error{Code: CodePluginCallsUnavailable, Detail: "plugin=" + id + " tool=" + name}
			}
		}
		if u, ok := k.plugins.(route.UnlistedCaller); ok && u.TakesUnlisted(id) {
			return u.CallTool(ctx, c, id, name)
		}
		return nil, &transport.Error{
			Code: route.CodeUnknownTool, Detail: "plugin=" + id + " tool=" + name, Retryable: true, Action: fault.ActionCorrectRequest,
			Hint: "GET " + c.URL("/k", new(transport.Query).Add("plugin", id)) + " lists its tools",
		}
	}
	if tools == nil {
		tools = []route.PluginTool{}
	}
	return pluginSchema{OK: true, Plugin: id, Tools: tools}, nil
}
