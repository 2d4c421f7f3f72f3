package stitchslop

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// The hooks through which the rest of the binary reaches the hub's
// stitchslop adapter without importing this package (adapters.Factory):
// from another process through its session file and control plane
// (Remote), and as the stitchslop part of `hub mcp` (hubFace).

// hubToolPrefix names the tab's tools in `hub mcp`, beside other bridges'.
const hubToolPrefix = "stitchslop_"

// hubFaceSpec is the stitchslop part of `hub mcp`.
var hubFaceSpec = adapters.FaceSpec{
	Instructions: "Stitch Slop tab commands are the " + hubToolPrefix + " tools (a renamed tool names the page's own command in its description); " +
		"when none are listed, call " + hubToolPrefix + toolWait + ": the tab attaches by itself. " +
		"A client whose tool list stays as it was at the start reaches every tab command through " + hubToolPrefix + toolCall + " {command, args}.",
	// The user's voice reaches the conversation as channel events.
	Experimental: channelCapability(),
	New:          newHubFace,
}

// remote reaches the hub's adapter that st describes from another process
// (Factory.Remote), through the session file in its config dir.
func remote(env adapters.RemoteEnv, st adapters.Status) (adapters.ToolBridge, bool) {
	return NewRemoteBridge(statusDir(st, env.Dirs.Home), st.Ports[0]), true
}

// statusDir is the config dir of the adapter st describes: the one it
// reports, else (a hub that reports none) the default.
func statusDir(st adapters.Status, home string) string {
	if st.Dir != "" {
		return st.Dir
	}
	return hub.ExpandHome(DefaultConfigDir, home)
}

// statusDir is Status.Dir: the config dir of the last Serve, absolute,
// as the session files name it; "" before the first Serve.
func (s *Server) statusDir() string {
	dir := s.configDir()
	if dir == "" {
		return ""
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// hubFace is the stitchslop part of `hub mcp`: a Mount that follows the
// hub's bridge over its control plane, again after every restart.
type hubFace struct {
	m    *Mount
	id   string // how the bridge's logs name this face
	home string
}

var _ adapters.FaceRunner = (*hubFace)(nil)

func newHubFace(env adapters.FaceEnv) adapters.Face {
	return &hubFace{m: NewMount(env.Server, hubToolPrefix, env.Log), id: env.FaceID, home: env.Dirs.Home}
}

// Run keeps the tab's tools in step with the bridge followed.
func (h *hubFace) Run(ctx context.Context) { h.m.Run(ctx) }

// Follow serves the tab of the bridge st describes until its event stream
// ends (it stopped, or restarted with a new key).
func (h *hubFace) Follow(ctx context.Context, st adapters.Status, attached func()) error {
	r, err := OpenRemote(ctx, statusDir(st, h.home), st.Ports[0])
	if err != nil {
		return err
	}
	defer r.Close()
	offered := make(chan struct{})
	err = h.m.Follow(ctx, r, h.id, func() { attached(); close(offered) })
	<-offered // it runs once the tools are offered or the stream ended: both have happened
	return err
}

func (h *hubFace) Absent(why string) { h.m.Absent(why) }

func (h *hubFace) Tools() []string { return slices.Sorted(maps.Keys(h.m.Names())) }

// Unknown claims every name under the prefix: a page tool the tab has
// not (yet) declared is one of them.
func (h *hubFace) Unknown(tool string) (string, bool) {
	if !strings.HasPrefix(tool, hubToolPrefix) {
		return "", false
	}
	return "The Stitch Slop tab has no such tool, or is not attached: call " + hubToolPrefix + toolWait + ".", true
}
