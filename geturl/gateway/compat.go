package gateway

import (
	"context"
	"sync"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// The compatibility surface: what the contract keeps supported though
// compact Init does not advertise it.
//
//   - the long descriptive routes, "/" + the tool's name (route.Entry.Long:
//     /read, /find, /grep, /outline, /stat, /project, /plugins, /range,
//     /write, /edit, /apply_patch, /terminal, /stage, /blob_status,
//     /result): the compact route's own Entry, so the same base, spec,
//     handler, journal identity and errors, byte for byte;
//   - /manifest: the capability's machine-readable description;
//   - /call?tool=<tool>&content=<base64url(JSON)>: the older generic
//     endpoint, whose JSON object is the tool's parameters.
const (
	manifestPath = "/manifest"
	callPath     = "/call"
	// compatTemplate is Init's compatibilityEndpoints: every endpoint
	// named <tool> in Init is also served at bases[ref] + /<tool>. Init's
	// 1.6 KiB leave no room to spell them out one by one.
	compatTemplate = "/<tool>"
)

// compatRoutes are the gateway's own routes, built on first use from the
// kernel's table (which Kernel.Handle may still change before serving;
// the long names share the kernel's entries, so they see those changes).
type compatRoutes struct {
	once     sync.Once
	manifest *route.Entry
	call     *route.Entry
	callSpec *transport.Spec
}

func (g *Gateway) compatTable() *compatRoutes {
	ct := &g.compat
	ct.once.Do(func() {
		var tools []string
		for _, rt := range g.opts.Kernel.Routes() {
			tools = append(tools, rt.Tool)
		}
		ct.callSpec = &transport.Spec{Route: callPath, Params: []transport.Param{
			{Name: "tool", Kind: transport.Enum, Values: tools, Required: true},
			{Name: "content", Required: true},
		}}
		ct.manifest = &route.Entry{Path: manifestPath, Tool: "manifest", Base: route.AnyBase, Spec: &transport.Spec{Route: manifestPath}, Handle: g.manifest}
		ct.call = &route.Entry{Path: callPath, Tool: "call", Base: route.AnyBase, Spec: ct.callSpec, Handle: g.call}
	})
	return ct
}

// route finds the entry a request path names: a compact route of the
// kernel's table, its long name, /manifest or /call.
func (g *Gateway) route(path string) (*route.Entry, bool) {
	k := g.opts.Kernel
	if rt, ok := k.Route(path); ok {
		return rt, true
	}
	if len(path) < 3 || path[0] != '/' {
		return nil, false
	}
	switch path {
	case manifestPath:
		return g.compatTable().manifest, true
	case callPath:
		return g.compatTable().call, true
	}
	for _, rt := range k.Routes() {
		if rt.Tool == path[1:] {
			return rt, true
		}
	}
	return nil, false
}

// byTool finds a kernel route by its tool's name.
func (g *Gateway) byTool(tool string) *route.Entry {
	for _, rt := range g.opts.Kernel.Routes() {
		if rt.Tool == tool {
			return rt
		}
	}
	return nil
}

// call serves /call?tool=<tool>&content=<base64url(JSON)>: the object is
// decoded strictly (transport.DecodeContent) into the request the tool's
// compact route would get, which is then served exactly as that route
// serves it: base, spec, handler, journal identity. A request on the
// wrong base is refused as the compact route's is, with the /call request
// as the suffix. Refusals of the decoded parameters carry their repair as
// the compact route's URL (the supported spelling, and the one that shows
// what was corrected); a content= value that is only a respelling of
// canonical base64url (padding, the standard alphabet) is repaired as a
// /call URL.
func (g *Gateway) call(ctx context.Context, c *route.Call) (any, *transport.Error) {
	rt := g.byTool(c.Args.Text("tool"))
	if rt == nil { // cannot happen: tool is an enum of the table's tools
		return nil, g.opts.Kernel.UnknownRoute(callPath, c.On)
	}
	if !rt.OnBase(c.On) || !rt.Served() {
		return nil, g.callOtherBase(c, rt)
	}
	// From here on the call is the tool's: its answer, refusals of the
	// content included, is stored (or, for /z, not) as the tool's is.
	c.Route = rt
	content := c.Args.Text("content")
	cont, terr := transport.DecodeContent(content)
	if terr != nil {
		if canon, ok := transport.CanonicalContent(content); ok && contentBinds(rt, canon) {
			u := c.Base() + c.Target.Rewrite(callPath, func(k string) bool { return k == "content" }, "content="+canon)
			if transport.Fits(u) {
				terr.Repair, terr.Action = u, fault.ActionFetchRepair
			}
		}
		return nil, terr
	}
	t, terr := cont.Target(rt.Path)
	if terr != nil {
		return nil, terr
	}
	return g.opts.Kernel.Serve(ctx, c, t)
}

// contentBinds reports whether a content= value decodes and binds
// cleanly to rt, so that a respelling of it is a repair worth offering.
func contentBinds(rt *route.Entry, content string) bool {
	cont, terr := transport.DecodeContent(content)
	if terr != nil {
		return false
	}
	t, terr := cont.Target(rt.Path)
	if terr != nil {
		return false
	}
	_, terr = transport.Bind(t, rt.Spec, "")
	return terr == nil
}

// callOtherBase refuses /call of a tool served on the other base (or not
// served at all) as the gateway refuses the compact route: the repair
// repeats the /call request as written.
func (g *Gateway) callOtherBase(c *route.Call, rt *route.Entry) *transport.Error {
	if !rt.Served() {
		return g.opts.Kernel.UnknownRoute(rt.Path, c.On)
	}
	other := route.MutationBase
	if c.On == route.MutationBase {
		other = route.ReadBase
	}
	if c.Bases.Of(other) == "" {
		return &transport.Error{
			Code: route.CodeMutationsDisabled, Detail: rt.Path + " needs the mutation capability",
			Hint: "this session is read-only; the operator can enable file writes or terminal for the project",
		}
	}
	name := map[route.BaseKind]string{route.ReadBase: "read (bases.r)", route.MutationBase: "mutation (bases.m)"}
	return route.WrongBase(c, rt.Path+" is served on the "+name[other]+" base", c.Target.Rewrite(callPath, nil, ""))
}

// manifest is the /manifest answer: everything the capability it was
// fetched on may use, and nothing more. On the read base: the read base
// only, the read tools, /k and /z; never the mutation base, its tools or
// the Init token. On the mutation base: both bases and every tool the
// session's permissions allow. Each tool names its compact route, its
// long route, the base it is served on ("r", "m", or "any" for /k and /z
// where the capability has both) and its parameters as the strict binder
// accepts them.
type manifest struct {
	OK          bool           `json:"ok"`
	Protocol    string         `json:"protocol"`
	Capability  string         `json:"capability"`
	Project     string         `json:"project"`
	Root        string         `json:"root"`
	Bases       route.Bases    `json:"bases"`
	Permissions permissions    `json:"permissions"`
	Fetch       string         `json:"fetch"`
	URL         string         `json:"url"`
	Escapes     string         `json:"escapes"`
	Limits      manifestLimits `json:"limits"`
	Tools       []manifestTool `json:"tools"`
}

type manifestLimits struct {
	Target        int `json:"targetBytes"`
	Raw           int `json:"rawBytes"`
	Wait          int `json:"waitMs"`
	ContentJSON   int `json:"contentJSONBytes"`
	ContentKeys   int `json:"contentKeys"`
	ContentValues int `json:"contentValues"`
}

type manifestTool struct {
	Tool  string `json:"tool"`
	Route string `json:"route"`
	Long  string `json:"long,omitempty"`
	Base  string `json:"base"`
	// Example is the call as Init writes it, for tools Init advertises.
	Example string `json:"example,omitempty"`
	transport.SpecInfo
}

const (
	manifestURLRule = "URL = bases[base]+route(or long)+?params; base any: either base; /call?tool=<tool>&content=<base64url(JSON of params; raw for the raw= tail)>"
)

func (g *Gateway) manifest(_ context.Context, c *route.Call) (any, *transport.Error) {
	perm := c.Session.Permissions()
	m := &manifest{
		OK: true, Protocol: "geturl/0", Capability: "read", Root: sandbox.VirtualRoot,
		Bases: route.Bases{Read: c.Bases.Read}, Permissions: permissions{Read: true},
		Fetch: fetchRule, URL: manifestURLRule, Escapes: ruleRaw,
		Limits: manifestLimits{Target: transport.MaxTarget, Raw: transport.MaxRaw, Wait: transport.MaxWait,
			ContentJSON: transport.MaxContentJSON, ContentKeys: transport.MaxContentFields, ContentValues: transport.MaxContentValues},
	}
	if ls, ok := c.Session.(route.LiveSession); ok {
		m.Project = ls.Project()
	}
	if c.On == route.MutationBase {
		m.Capability, m.Bases = "mutation", c.Bases
		m.Permissions = permissions{Read: true, Write: perm.Write, Terminal: perm.Terminal}
	}
	own := c.On.String()
	var tools []string
	for _, rt := range g.opts.Kernel.Routes() {
		if !rt.Served() || !allowed(rt, perm) {
			continue
		}
		base := rt.Base.String()
		switch {
		case c.On == route.ReadBase && rt.Base == route.MutationBase:
			continue
		case c.On == route.ReadBase && rt.Base == route.AnyBase:
			base = own
		}
		tools = append(tools, rt.Tool)
		m.Tools = append(m.Tools, manifestTool{Tool: rt.Tool, Route: rt.Path, Long: rt.Long(), Base: base, Example: rt.Init, SpecInfo: rt.Spec.Describe()})
	}
	any := "any"
	if c.On == route.ReadBase {
		any = own
	}
	ct := g.compatTable()
	call := ct.callSpec.Describe()
	call.Params[0].Values = tools
	m.Tools = append(m.Tools,
		manifestTool{Tool: "manifest", Route: manifestPath, Base: any, SpecInfo: ct.manifest.Spec.Describe()},
		manifestTool{Tool: "call", Route: callPath, Base: any, SpecInfo: call})
	return m, nil
}
