package adapters

import (
	"fmt"
	"sort"

	"github.com/urfave/cli/v2"
)

// Factory describes one adapter kind: its name (the only place it is
// spelled), how to make its config, how to build it from that config, its
// command group, and the hooks through which the binary's other parts
// reach a running one without naming its package. Build one with
// FactoryFor and set the hooks the bridge has.
type Factory struct {
	Name string
	// NewConfig returns the section's defaults (a pointer to a struct).
	NewConfig func() Config
	// New builds the adapter from a validated, enabled config. A protocol
	// that has not landed yet returns ErrNotImplemented.
	New func(cfg Config) (Adapter, error)
	// Command is the adapter's `hub <name> …` command group, if it has
	// one, given what it needs of the binary (CommandEnv).
	Command func(env CommandEnv) *cli.Command
	// Remote reaches, from another process, the adapter that the hub
	// running for this user reports as st (running, with its ports, and
	// its Dir when it has one): through the bridge's own control plane, as
	// its shell client does. ok is false when it cannot be reached so. Nil
	// for a bridge that offers no ToolBridge.
	Remote func(env RemoteEnv, st Status) (b ToolBridge, ok bool)
	// Face is the bridge's part of `hub mcp`; nil for a bridge that has
	// none.
	Face *FaceSpec
}

// FactoryFor builds a Factory whose New receives the config type C that
// newConfig makes, so no adapter writes the type assertion itself.
func FactoryFor[C Config](name string, newConfig func() C, build func(C) (Adapter, error), command func(CommandEnv) *cli.Command) Factory {
	return Factory{
		Name:      name,
		NewConfig: func() Config { return newConfig() },
		New: func(c Config) (Adapter, error) {
			cfg, ok := c.(C)
			if !ok {
				return nil, fmt.Errorf("%s: config is %T, want %T", name, c, *new(C))
			}
			return build(cfg)
		},
		Command: command,
	}
}

// Registry is the explicit list of adapter kinds a binary knows. It is
// built by the caller (cmd/hub, or a test) — never by init side effects.
type Registry struct {
	byName map[string]Factory
	order  []string // as given to NewRegistry
}

// NewRegistry builds a registry; duplicate names are a programming error.
// The order of factories is the order Factories returns them in.
func NewRegistry(factories ...Factory) *Registry {
	r := &Registry{byName: map[string]Factory{}}
	for _, f := range factories {
		if _, dup := r.byName[f.Name]; dup {
			panic(fmt.Sprintf("adapters: duplicate factory %q", f.Name))
		}
		if f.NewConfig == nil || f.New == nil {
			panic(fmt.Sprintf("adapters: factory %q lacks NewConfig or New", f.Name))
		}
		if f.Face != nil && f.Face.New == nil {
			panic(fmt.Sprintf("adapters: factory %q has a Face without New", f.Name))
		}
		r.byName[f.Name] = f
		r.order = append(r.order, f.Name)
	}
	return r
}

// Lookup returns the factory for name.
func (r *Registry) Lookup(name string) (Factory, bool) {
	f, ok := r.byName[name]
	return f, ok
}

// Factories returns the registered factories in the order NewRegistry was
// given them: the order in which `hub mcp` lists the bridges' tools.
func (r *Registry) Factories() []Factory {
	out := make([]Factory, len(r.order))
	for i, n := range r.order {
		out[i] = r.byName[n]
	}
	return out
}

// Commands returns the command groups of the registered adapters, in
// sorted order, each given env.
func (r *Registry) Commands(env CommandEnv) []*cli.Command {
	var out []*cli.Command
	for _, n := range r.Names() {
		if f := r.byName[n]; f.Command != nil {
			out = append(out, f.Command(env))
		}
	}
	return out
}

// Remote reaches the adapter name that the running hub reports as st
// through its factory's Remote hook; ok is false for an adapter the
// registry does not know, one without the hook, and one that is not
// running with its ports.
func (r *Registry) Remote(env RemoteEnv, name string, st Status) (ToolBridge, bool) {
	f, ok := r.byName[name]
	if !ok || f.Remote == nil || st.State != StateRunning || len(st.Ports) == 0 {
		return nil, false
	}
	return f.Remote(env, st)
}

// Names returns the registered names in sorted order.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
