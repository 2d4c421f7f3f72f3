package kernel

import (
	"context"
	"os/exec"

	"github.com/hubdev/hub/geturl/search"
	"github.com/hubdev/hub/geturl/transport"
)

// Options configure a Kernel.
type Options struct {
	// Plugins is the plugin catalog /k discovers; nil means none installed.
	Plugins Plugins
	// RG is the ripgrep executable /g uses; "" looks rg up on PATH once,
	// at New. NoRG forces the Go engine (same results, no rg process).
	RG   string
	NoRG bool
	// SearchLimits bound /f and /g; zero fields take search's defaults.
	SearchLimits search.Limits
	// NoVersions makes /p report tools by presence only (no version
	// probes, which run each tool once per process).
	NoVersions bool
	// Outlines bounds the /o requests outlining at once, across every
	// session (0: DefaultOutlines); see outlineGate.
	Outlines int
}

// Kernel is the route table with its handlers. It is immutable after New
// (apart from Handle, used before serving) and safe for concurrent use.
type Kernel struct {
	routes       []*Route
	byPath       map[string]*Route
	plugins      Plugins
	rg           string
	searchLimits search.Limits
	noVersions   bool
	outlines     *outlineGate
}

// New builds the kernel with every route of the table.
func New(opts Options) *Kernel {
	k := &Kernel{byPath: map[string]*Route{}, plugins: opts.Plugins, rg: opts.RG, searchLimits: opts.SearchLimits, noVersions: opts.NoVersions,
		outlines: newOutlineGate(opts.Outlines)}
	if k.rg == "" && !opts.NoRG {
		k.rg, _ = exec.LookPath("rg")
	}
	if opts.NoRG {
		k.rg = ""
	}
	if k.plugins == nil {
		k.plugins = noPlugins{}
	}
	for _, r := range k.table() {
		k.routes = append(k.routes, r)
		k.byPath[r.Path] = r
	}
	return k
}

// table is the one place routes are declared: read routes with their
// handlers, mutation routes declared without one (package mutation
// installs them) so capability-base repairs and Init know them even in a
// kernel without mutations. Order is Init's order.
func (k *Kernel) table() []*Route {
	return []*Route{
		{Path: "/r", Tool: "read", Base: ReadBase, Spec: readSpec, Handle: k.read, Init: "/r?path=<p>"},
		{Path: "/f", Tool: "find", Base: ReadBase, Spec: findSpec, Handle: k.find, Init: "/f?name=<part>"},
		{Path: "/g", Tool: "grep", Base: ReadBase, Spec: grepSpec, Handle: k.grep, Init: "/g?path=<p>&raw=<literal>"},
		{Path: "/o", Tool: "outline", Base: ReadBase, Spec: outlineSpec, Handle: k.outlineFile, Init: "/o?path=<p>"},
		{Path: "/t", Tool: "stat", Base: ReadBase, Spec: statSpec, Handle: k.stat, Init: "/t?path=<p>"},
		{Path: "/p", Tool: "project", Base: ReadBase, Spec: projectSpec, Handle: k.project, Init: "/p"},
		{Path: "/k", Tool: "plugins", Base: AnyBase, Spec: pluginSpec, Handle: k.plugin, Init: "/k"},
		{Path: "/z", Tool: "range", Base: AnyBase, Spec: rangeSpec, Handle: k.rangeFallback},

		{Path: "/w", Tool: "write", Base: MutationBase, Init: "/w?path=<p>&wait=1000&raw=<content>"},
		{Path: "/e", Tool: "edit", Base: MutationBase, Init: "/e?path=<p>&old=<a>&new=<b>&wait=1000"},
		{Path: "/a", Tool: "apply_patch", Base: MutationBase, Init: "/a?wait=1000&raw=<patch>"},
		{Path: "/x", Tool: "terminal", Base: MutationBase, Init: "/x?wait=1000&raw=<command>"},
		{Path: "/s", Tool: "stage", Base: MutationBase, Init: "/s?blob=<id>&i=<n>&count=<N>&raw=<chunk>"},
		{Path: "/b", Tool: "blob_status", Base: MutationBase},
		{Path: "/j", Tool: "result", Base: MutationBase, Init: "/j?call=<id>"},
	}
}

// Handle installs the spec and handler of a declared route (the mutation
// kernel's entry point, and tests'). It must be called before serving.
func (k *Kernel) Handle(path string, spec *transport.Spec, h Handler) {
	r, ok := k.byPath[path]
	if !ok {
		panic("kernel: Handle of undeclared route " + path)
	}
	r.Spec, r.Handle = spec, h
}

// Route returns the declared route for a path ("/r").
func (k *Kernel) Route(path string) (*Route, bool) {
	r, ok := k.byPath[path]
	return r, ok
}

// Routes returns the table in declaration order.
func (k *Kernel) Routes() []*Route { return k.routes }

// Call is one request on its way through a route.
type Call struct {
	Session Session
	Bases   Bases
	// On is the base kind the request arrived on (ReadBase or MutationBase).
	On    BaseKind
	Route *Route
	Args  *transport.Args
	// Head is set for HEAD requests: the agent sees no body, so nothing it
	// "read" may count as read coverage.
	Head bool
	// Target is the request as written, for recovery URLs that must
	// repeat it exactly with one control parameter changed (retry and
	// repeat carry a new run=).
	Target *transport.Target

	// Set by journaled handlers, for the activity view: the intent's call
	// id, and whether this request replayed an existing intent.
	Intent   string
	Replayed bool
}

// StoresAnswer reports whether the call's JSON answer goes into the
// session's replay store and becomes what /z?last=1 reads: not for HEAD
// (the agent saw no body), not for /z itself, whose answers, errors
// included, never replace the last pointer, and not for a route that does
// not exist (Route nil): a mistyped /Z?last=1 must not replace the answer
// it meant to recover with its own short unknown_route.
func (c *Call) StoresAnswer() bool {
	return !c.Head && c.Session.Replay() != nil && c.Route != nil && c.Route.Path != rangeSpec.Route
}

// Base is the exact base the call arrived on.
func (c *Call) Base() string { return c.Bases.Of(c.On) }

// URL builds an exact URL on the call's base.
func (c *Call) URL(route string, q *transport.Query) string {
	return transport.URL(c.Base(), route, q)
}

// Serve binds the target's parameters to a served route and runs it.
func (k *Kernel) Serve(ctx context.Context, c *Call, t *transport.Target) (any, *transport.Error) {
	if !c.Route.Served() {
		return nil, k.UnknownRoute(c.Route.Path, c.On)
	}
	args, err := transport.Bind(t, c.Route.Spec, c.Base())
	if err != nil {
		return nil, err
	}
	c.Args, c.Target = args, t
	return c.Route.Handle(ctx, c)
}
