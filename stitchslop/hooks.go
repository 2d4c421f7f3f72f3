package stitchslop

import (
	"path/filepath"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// The hooks through which the rest of the binary reaches the hub's
// stitchslop adapter without importing this package (adapters.Factory):
// from another process through its session file and control plane
// (Remote).

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

// statusDirLocked is Status.Dir: the config dir of the current run,
// absolute, as the session files name it; "" before the first Serve.
// The caller holds s.mu.
func (s *Server) statusDirLocked() string {
	if s.env == nil {
		return ""
	}
	dir := s.resolveConfigDir(s.env.Dirs.Home)
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
