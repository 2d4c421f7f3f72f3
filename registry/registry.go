// Package registry is the one list of the hub's bridges: every command,
// face and test that needs the adapters asks it, and nothing else names a
// bridge package (deps_test.go holds the layering to that).
package registry

import (
	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/aiui"
	"github.com/hubdev/hub/geturl"
	"github.com/hubdev/hub/pixelle"
	"github.com/hubdev/hub/stitchslop"
)

// New returns the registry of every adapter kind this binary knows, in
// the order `hub mcp` lists their tools and instructions.
func New() *adapters.Registry {
	return adapters.NewRegistry(
		stitchslop.Factory(),
		pixelle.Factory(),
		aiui.Factory(),
		geturl.Factory(),
	)
}
