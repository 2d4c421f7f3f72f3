package kernel

import (
	"context"

	"github.com/hubdev/hub/geturl/engine/discover"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// projectSpec is /p: no parameters.
var projectSpec = &transport.Spec{Route: "/p"}

type projectAnswer struct {
	OK   bool   `json:"ok"`
	Root string `json:"root"`
	discover.Project
}

// project answers /p: executables on PATH (presence and version, never
// their location), project markers, package.json scripts, go.mod and
// Makefile targets — what to build and test with, without a mutation.
func (k *Kernel) project(ctx context.Context, c *route.Call) (any, *transport.Error) {
	d := discover.Discoverer{Scope: c.Session.Scope(), NoVersions: k.noVersions}
	return projectAnswer{OK: true, Root: sandbox.VirtualRoot, Project: d.Discover(ctx)}, nil
}
