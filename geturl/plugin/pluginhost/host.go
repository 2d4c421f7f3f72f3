package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hubdev/hub/geturl/engine/intents"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/plugin"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// Error codes of the host.
const (
	CodeInvalidArguments = "invalid_arguments"
	CodePluginFailed     = "plugin_failed"
)

// statusTimeout bounds one plugin's Status in a listing.
const statusTimeout = 2 * time.Second

// Host is the plugin catalog and call runner. It is immutable after New
// and safe for concurrent use.
type Host struct {
	mut     *mutation.Host
	plugins []plugin.Plugin
	byID    map[string]plugin.Plugin
}

var (
	_ route.Plugins        = (*Host)(nil)
	_ route.UnlistedCaller = (*Host)(nil)
	_ route.PluginReplayer = (*Host)(nil)
	_ route.PluginGate     = (*Host)(nil)
)

// New builds the catalog of ps, in order; mutation calls are journaled
// through m. Two plugins with one id are a programming error.
func New(m *mutation.Host, ps ...plugin.Plugin) (*Host, error) {
	h := &Host{mut: m, byID: map[string]plugin.Plugin{}}
	for _, p := range ps {
		if p == nil {
			continue
		}
		if _, dup := h.byID[p.ID()]; dup {
			return nil, fmt.Errorf("plugin %s registered twice", p.ID())
		}
		h.byID[p.ID()] = p
		h.plugins = append(h.plugins, p)
	}
	return h, nil
}

// present reports whether p is there now (a Conditional plugin may not be).
func present(p plugin.Plugin) bool {
	c, ok := p.(plugin.Conditional)
	return !ok || c.Present()
}

// plugin is the plugin with id when it is present now.
func (h *Host) plugin(id string) (plugin.Plugin, bool) {
	p, ok := h.byID[id]
	if !ok || !present(p) {
		return nil, false
	}
	return p, true
}

// authority is the ceiling of a call by session s: its generation's
// canonical project root and permissions.
func authority(s route.Session) plugin.Authority {
	perm := s.Permissions()
	return plugin.Authority{Root: s.Scope().Root(), Write: perm.Write, Terminal: perm.Terminal, Bridges: perm.Bridges}
}

// admit is the refusal of a Gated plugin for auth (nil when it admits it,
// or is not gated).
func admit(p plugin.Plugin, auth plugin.Authority) error {
	if g, ok := p.(plugin.Gated); ok {
		return g.Admit(auth)
	}
	return nil
}

// List implements route.Plugins: every present plugin with its status and
// tool count, as the operator sees them.
func (h *Host) List() []route.PluginSummary { return h.list(nil) }

// ListFor implements route.PluginGate: List without the plugins session
// s may not reach (their status is not even asked).
func (h *Host) ListFor(s route.Session) []route.PluginSummary {
	auth := authority(s)
	return h.list(&auth)
}

// Gate implements route.PluginGate: the refusal a Gated plugin gives
// session s, whether or not it is present now (its refusal says what the
// project lacks, which holds either way).
func (h *Host) Gate(s route.Session, id string) *transport.Error {
	p, ok := h.byID[id]
	if !ok {
		return nil
	}
	if err := admit(p, authority(s)); err != nil {
		return gateError(s, err)
	}
	return nil
}

// gateError is a plugin's refusal to admit a session, as /k serves it.
func gateError(s route.Session, err error) *transport.Error {
	sc := s.Scope()
	var pe *plugin.Error
	if errors.As(err, &pe) {
		return &transport.Error{Code: pe.Code, Detail: sc.Redact(pe.Detail), Hint: sc.Redact(pe.Hint), Retryable: pe.Retryable}
	}
	return &transport.Error{Code: CodePluginFailed, Detail: sc.Redact(err.Error())}
}

// list is the present plugins, only those auth reaches when it is set.
func (h *Host) list(auth *plugin.Authority) []route.PluginSummary {
	out := make([]route.PluginSummary, 0, len(h.plugins))
	for _, p := range h.plugins {
		if !present(p) || auth != nil && admit(p, *auth) != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
		st := p.Status(ctx)
		cancel()
		out = append(out, route.PluginSummary{ID: p.ID(), Description: p.Description(), Status: st, Tools: len(p.Tools())})
	}
	return out
}

// Tools implements route.Plugins.
func (h *Host) Tools(id string) ([]route.PluginTool, bool) {
	p, ok := h.plugin(id)
	if !ok {
		return nil, false
	}
	tools := p.Tools()
	out := make([]route.PluginTool, len(tools))
	for i, t := range tools {
		out[i] = route.PluginTool{Name: t.Name, Description: t.Description, Mutation: t.Mutation, InputSchema: t.InputSchema}
	}
	return out, true
}

type callAnswer struct {
	OK     bool            `json:"ok"`
	Plugin string          `json:"plugin"`
	Tool   string          `json:"tool"`
	Result json.RawMessage `json:"result"`
}

// TakesUnlisted implements route.UnlistedCaller: an Open plugin
// classifies calls of tools it does not list itself.
func (h *Host) TakesUnlisted(id string) bool {
	p, ok := h.plugin(id)
	if !ok {
		return false
	}
	o, ok := p.(plugin.Open)
	return ok && o.TakesUnlisted()
}

// CallTool implements route.PluginCaller.
func (h *Host) CallTool(ctx context.Context, c *route.Call, id, tool string) (any, *transport.Error) {
	p, ok := h.plugin(id)
	if !ok { // it went away since the handler looked
		return nil, &transport.Error{Code: route.CodeUnknownPlugin, Detail: "plugin=" + id, Retryable: true, Action: fault.ActionCorrectRequest}
	}
	// The handler asked Gate already; a caller that did not is refused
	// here all the same, before the plugin classifies anything.
	auth := authority(c.Session)
	if err := admit(p, auth); err != nil {
		return nil, gateError(c.Session, err)
	}
	args, terr := arguments(c)
	if terr != nil {
		return nil, terr
	}
	mut, err := p.Classify(tool, args)
	if err != nil {
		return nil, transport.ErrorOf(toolError(c, err))
	}
	if terr := wrongBase(c, mut); terr != nil {
		return nil, terr
	}
	if !mut {
		res, f := call(ctx, c, p, auth, tool, args)
		if f != nil {
			return nil, transport.ErrorOf(f)
		}
		return callAnswer{OK: true, Plugin: id, Tool: tool, Result: res}, nil
	}
	in := pluginIntent(id, tool, args)
	in.Exec = func(ctx context.Context, run *intents.Run) (any, *fault.Error) {
		run.Running()
		return call(ctx, c, p, auth, tool, args)
	}
	return h.mut.Journaled(ctx, c, in)
}

// ReplayTool implements route.PluginReplayer: a mutation this
// generation has journaled is answered from its record, whether or not
// its plugin is there now (a bridge that is down cannot even classify the
// call), so the agent learns its outcome instead of being told its URL is
// wrong.
func (h *Host) ReplayTool(ctx context.Context, c *route.Call, id, tool string) (any, bool, *transport.Error) {
	if h.Gate(c.Session, id) != nil {
		return nil, false, nil // the call proper is refused
	}
	args, terr := arguments(c)
	if terr != nil {
		return nil, false, nil // the call proper says what is wrong
	}
	return h.mut.Replayed(ctx, c, pluginIntent(id, tool, args))
}

// pluginIntent is a plugin mutation's journal identity: the plugin, the
// tool and the canonical arguments.
func pluginIntent(id, tool string, args json.RawMessage) intents.Intent {
	return intents.Intent{Tool: "plugin", Args: map[string]any{"plugin": id, "tool": tool, "args": args}}
}

// arguments reads the call's JSON object from the raw tail or a staged
// blob ({} when there is neither) and canonicalises it.
func arguments(c *route.Call) (json.RawMessage, *transport.Error) {
	text := "{}"
	switch {
	case c.Args.Has("blob"):
		st, ok := mutation.StateOf(c.Session)
		if !ok {
			return nil, &transport.Error{Code: mutation.CodeMutationsUnavailable, Detail: "this session generation has no staged content"}
		}
		var f *fault.Error
		if text, f = st.Staging.Assemble(c.Args.Text("blob"), c.Args.IntOr("count", 0)); f != nil {
			return nil, transport.ErrorOf(f)
		}
	case c.Args.Has("raw"):
		text, _ = c.Args.Raw()
	}
	canon, err := intents.CanonicalJSON([]byte(text))
	if err == nil && (len(canon) == 0 || canon[0] != '{') {
		err = errors.New("not a JSON object")
	}
	if err != nil {
		return nil, &transport.Error{Code: CodeInvalidArguments, Detail: "the arguments must be one JSON object: " + err.Error(),
			Hint:      "put the arguments as a JSON object after raw= (last), or stage larger JSON with /s and pass blob=",
			Retryable: true, Action: fault.ActionCorrectRequest}
	}
	return canon, nil
}

// wrongBase refuses a call on the base its classification does not
// belong to (route.WrongBase): a read on the mutation base gets the exact
// same call on the read base as the repair (without the wait=, run= or
// call= it would ignore, which it refuses on the read base too); a
// mutation on the read base gets the call to append to bases.m, never
// the URL. A session with no mutation base is told it has none.
func wrongBase(c *route.Call, mut bool) *transport.Error {
	switch {
	case mut && c.On == route.ReadBase:
		if c.Bases.Mutation == "" {
			return &transport.Error{Code: route.CodeMutationsDisabled, Detail: "this call is a mutation and the session is read-only",
				Hint: "the operator can enable file writes or terminal for the project"}
		}
		return route.WrongBase(c, "this call is a mutation: it is served on the mutation (bases.m) base", mutation.Origin(c))
	case !mut && c.On == route.MutationBase:
		return route.WrongBase(c, "this call only reads: it is served on the read (bases.r) base", readCall(c))
	case !mut:
		if given := intentControls(c); len(given) > 0 {
			return &transport.Error{Code: transport.CodeInvalidParameter,
				Detail: strings.Join(given, ", ") + " on a call that only reads: nothing is journaled for it to steer",
				Hint:   "fetch the repair URL: the same call without them", Retryable: true, Action: fault.ActionFetchRepair,
				Repair: c.Bases.Read + readCall(c)}
		}
	}
	return nil
}

// intentControls are the parameters that steer a journaled intent (wait,
// run, call) given on this call. A read is not journaled, so strict
// binding refuses them rather than ignore them.
func intentControls(c *route.Call) []string {
	var given []string
	for _, n := range []string{"wait", "run", "call"} {
		if c.Args.Has(n) {
			given = append(given, n+"=")
		}
	}
	return given
}

// readCall is the request as written from its route on, without the
// intent controls a read has no use for.
func readCall(c *route.Call) string {
	if c.Target == nil {
		return mutation.Origin(c)
	}
	return c.Target.Rewrite(c.Route.Path, func(key string) bool { return key == "wait" || key == "run" || key == "call" }, "")
}

// call runs the plugin under auth and redacts the project's host path
// from what it returns.
func call(ctx context.Context, c *route.Call, p plugin.Plugin, auth plugin.Authority, tool string, args json.RawMessage) (res json.RawMessage, terr *fault.Error) {
	defer func() {
		if r := recover(); r != nil {
			res, terr = nil, &fault.Error{Code: CodePluginFailed, Detail: "plugin " + p.ID() + " failed unexpectedly"}
		}
	}()
	out, err := p.Call(ctx, auth, tool, args)
	if err != nil {
		return nil, toolError(c, err)
	}
	if len(out) == 0 {
		out = json.RawMessage("null")
	}
	red := json.RawMessage(c.Session.Scope().Redact(string(out)))
	if !json.Valid(red) {
		return nil, &fault.Error{Code: CodePluginFailed, Detail: "plugin " + p.ID() + " returned invalid JSON"}
	}
	return red, nil
}

// toolError turns a plugin's error into the agent-facing shape, host
// paths redacted.
func toolError(c *route.Call, err error) *fault.Error {
	sc := c.Session.Scope()
	var pe *plugin.Error
	if errors.As(err, &pe) {
		e := &fault.Error{Code: pe.Code, Detail: sc.Redact(pe.Detail), Hint: sc.Redact(pe.Hint), Retryable: pe.Retryable}
		if pe.Retryable {
			e.Action = fault.ActionRetryLater
		}
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &fault.Error{Code: CodePluginFailed, Detail: "the call was cut short: " + err.Error(), Retryable: true, Action: fault.ActionRetryLater}
	}
	return &fault.Error{Code: CodePluginFailed, Detail: sc.Redact(err.Error()), Retryable: true, Action: fault.ActionRetryLater}
}
