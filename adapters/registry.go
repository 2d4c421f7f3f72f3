package adapters

import (
	"fmt"
	"sort"

	"github.com/urfave/cli/v2"
)

// Factory describes one adapter kind: its name (the only place it is
// spelled), how to make its config, how to build it from that config, and
// its command group. Build one with FactoryFor.
type Factory struct {
	Name string
	// NewConfig returns the section's defaults (a pointer to a struct).
	NewConfig func() Config
	// New builds the adapter from a validated, enabled config. A protocol
	// that has not landed yet returns ErrNotImplemented.
	New func(cfg Config) (Adapter, error)
	// Command is the adapter's `hub <name> …` command group, if it has one.
	Command func() *cli.Command
}

// FactoryFor builds a Factory whose New receives the config type C that
// newConfig makes, so no adapter writes the type assertion itself.
func FactoryFor[C Config](name string, newConfig func() C, build func(C) (Adapter, error), command func() *cli.Command) Factory {
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
}

// NewRegistry builds a registry; duplicate names are a programming error.
func NewRegistry(factories ...Factory) *Registry {
	r := &Registry{byName: map[string]Factory{}}
	for _, f := range factories {
		if _, dup := r.byName[f.Name]; dup {
			panic(fmt.Sprintf("adapters: duplicate factory %q", f.Name))
		}
		if f.NewConfig == nil || f.New == nil {
			panic(fmt.Sprintf("adapters: factory %q lacks NewConfig or New", f.Name))
		}
		r.byName[f.Name] = f
	}
	return r
}

// Lookup returns the factory for name.
func (r *Registry) Lookup(name string) (Factory, bool) {
	f, ok := r.byName[name]
	return f, ok
}

// Commands returns the command groups of the registered adapters, in
// sorted order.
func (r *Registry) Commands() []*cli.Command {
	var out []*cli.Command
	for _, n := range r.Names() {
		if f := r.byName[n]; f.Command != nil {
			out = append(out, f.Command())
		}
	}
	return out
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
