package adapters

import (
	"fmt"
	"sort"
)

// Factory describes one adapter kind: how to make its config and how to
// build it from that config.
type Factory struct {
	Name    string
	Summary string // one line for `hub status` and docs
	// NewConfig returns the section's defaults (a pointer to a struct).
	NewConfig func() Config
	// New builds the adapter from a validated, enabled config. A protocol
	// that has not landed yet returns ErrNotImplemented.
	New func(cfg Config) (Adapter, error)
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

// Names returns the registered names in sorted order.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
