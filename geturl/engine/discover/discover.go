package discover

import (
	"context"
	"os/exec"
	"time"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/hub"
)

// Bounds of one discovery.
const (
	MaxFileBytes   = 1 << 20 // package.json, go.mod, Makefile read at most this much
	MaxScripts     = 64
	MaxCommandLen  = 300
	MaxMakeTargets = 100
)

// Project is the /p answer.
type Project struct {
	Tools          []Tool       `json:"tools"`
	Markers        []string     `json:"markers"`
	PackageManager string       `json:"packageManager,omitempty"`
	Package        *PackageJSON `json:"packageJson,omitempty"`
	GoMod          *GoMod       `json:"goMod,omitempty"`
	MakeTargets    []string     `json:"makeTargets,omitempty"`
	// Truncated is set when a bound cut a list.
	Truncated bool `json:"truncated"`
	// Warnings name files that could not be understood.
	Warnings []string `json:"warnings,omitempty"`
}

// Tool is one executable of the fixed list.
type Tool struct {
	Name    string `json:"name"`
	Found   bool   `json:"found"`
	Version string `json:"version,omitempty"`
}

// Discoverer inspects one project. The zero value of each field is a
// sensible default.
type Discoverer struct {
	Scope *sandbox.Scope
	// NoVersions skips the version probes (presence only).
	NoVersions bool
	// Timeout bounds each version probe (default 1.5 s).
	Timeout time.Duration
	// LookPath finds an executable (default exec.LookPath).
	LookPath func(string) (string, error)
	// Tools overrides the list of executables looked for.
	Tools []string
}

// Discover inspects the project and the PATH.
func (d *Discoverer) Discover(ctx context.Context) Project {
	p := Project{Markers: []string{}}
	tools := make(chan []Tool, 1)
	hub.Go(ctx, "geturl /p tool probes", func() { tools <- d.tools(ctx) })
	d.markers(&p)
	d.packageJSON(&p)
	d.goMod(&p)
	d.makefile(&p)
	p.Tools = <-tools
	return p
}

func (d *Discoverer) lookPath(name string) (string, error) {
	if d.LookPath != nil {
		return d.LookPath(name)
	}
	return exec.LookPath(name)
}

func (d *Discoverer) warn(p *Project, msg string) { p.Warnings = append(p.Warnings, msg) }
