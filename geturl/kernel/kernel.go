package kernel

import (
	"context"
	"os/exec"

	"github.com/hubdev/hub/geturl/engine/search"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// Options configure a Kernel.
type Options struct {
	// Plugins is the plugin catalog /k discovers; nil means none installed.
	Plugins route.Plugins
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
	// Mutations serves the mutation routes; nil leaves them declared and
	// unserved (unknown_route), as in a read-only bridge.
	Mutations *mutation.Host
}

// Kernel is the route table with its handlers. It is immutable after New
// (apart from Handle, used before serving) and safe for concurrent use.
type Kernel struct {
	routes       []*route.Entry
	byPath       map[string]*route.Entry
	plugins      route.Plugins
	rg           string
	searchLimits search.Limits
	noVersions   bool
	outlines     *outlineGate
}

// New builds the kernel with every route of the table.
func New(opts Options) *Kernel {
	k := &Kernel{byPath: map[string]*route.Entry{}, plugins: opts.Plugins, rg: opts.RG, searchLimits: opts.SearchLimits, noVersions: opts.NoVersions,
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
	for _, r := range k.table(opts.Mutations) {
		k.routes = append(k.routes, r)
		k.byPath[r.Path] = r
	}
	return k
}

// table is the one place routes are declared, each with its handler: the
// read routes' are the kernel's own, the mutation routes' are m's
// (package mutation). Without m the mutation routes are still declared,
// unserved, so capability-base repairs and Init know them. Order is Init's
// order.
func (k *Kernel) table(m *mutation.Host) []*route.Entry {
	var w, e, a, x, s, b, j route.Handler
	if m != nil {
		w, e, a, x, s, b, j = m.Write, m.Edit, m.Patch, m.Terminal, m.Stage, m.BlobStatus, m.Result
	}
	return []*route.Entry{
		{Path: "/r", Tool: "read", Base: route.ReadBase, Spec: readSpec, Handle: k.read, Init: "/r?path=<p>"},
		{Path: "/f", Tool: "find", Base: route.ReadBase, Spec: findSpec, Handle: k.find, Init: "/f?name=<part>"},
		{Path: "/g", Tool: "grep", Base: route.ReadBase, Spec: grepSpec, Handle: k.grep, Init: "/g?path=<p>&raw=<literal>"},
		{Path: "/o", Tool: "outline", Base: route.ReadBase, Spec: outlineSpec, Handle: k.outlineFile, Init: "/o?path=<p>"},
		{Path: "/t", Tool: "stat", Base: route.ReadBase, Spec: statSpec, Handle: k.stat, Init: "/t?path=<p>"},
		{Path: "/p", Tool: "project", Base: route.ReadBase, Spec: projectSpec, Handle: k.project, Init: "/p"},
		{Path: "/k", Tool: "plugins", Base: route.AnyBase, Spec: pluginSpec, Handle: k.plugin, Init: "/k"},
		{Path: "/z", Tool: "range", Base: route.AnyBase, Spec: rangeSpec, Handle: k.rangeFallback},

		{Path: "/w", Tool: "write", Base: route.MutationBase, Spec: mutation.WriteSpec, Handle: w, Init: "/w?path=<p>&wait=1000&raw=<content>"},
		{Path: "/e", Tool: "edit", Base: route.MutationBase, Spec: mutation.EditSpec, Handle: e, Init: "/e?path=<p>&old=<a>&new=<b>&wait=1000"},
		{Path: "/a", Tool: "apply_patch", Base: route.MutationBase, Spec: mutation.PatchSpec, Handle: a, Init: "/a?wait=1000&raw=<patch>"},
		{Path: "/x", Tool: "terminal", Base: route.MutationBase, Spec: mutation.TerminalSpec, Handle: x, Init: "/x?wait=1000&raw=<command>"},
		{Path: "/s", Tool: "stage", Base: route.MutationBase, Spec: mutation.StageSpec, Handle: s, Init: "/s?blob=<id>&i=<n>&count=<N>&raw=<chunk>"},
		{Path: "/b", Tool: "blob_status", Base: route.MutationBase, Spec: mutation.BlobSpec, Handle: b},
		{Path: "/j", Tool: "result", Base: route.MutationBase, Spec: mutation.ResultSpec, Handle: j, Init: "/j?call=<id>"},
	}
}

// Handle replaces the spec and handler of a declared route, before
// serving: tests serve stand-ins with it.
func (k *Kernel) Handle(path string, spec *transport.Spec, h route.Handler) {
	r, ok := k.byPath[path]
	if !ok {
		panic("kernel: Handle of undeclared route " + path)
	}
	r.Spec, r.Handle = spec, h
}

// Route returns the declared route for a path ("/r").
func (k *Kernel) Route(path string) (*route.Entry, bool) {
	r, ok := k.byPath[path]
	return r, ok
}

// Routes returns the table in declaration order.
func (k *Kernel) Routes() []*route.Entry { return k.routes }

// Serve binds the target's parameters to a served route and runs it.
func (k *Kernel) Serve(ctx context.Context, c *route.Call, t *transport.Target) (any, *transport.Error) {
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
