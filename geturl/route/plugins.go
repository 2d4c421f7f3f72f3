package route

import (
	"context"
	"encoding/json"

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
