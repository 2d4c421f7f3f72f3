package hub

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Dirs are the hub's own XDG locations. Protocol-mandated paths (such as
// ~/.stitchslop or aiui's registry) stay where their specs put them and are
// derived from Home.
type Dirs struct {
	Home   string // the user's home directory
	Config string // $XDG_CONFIG_HOME/hub
	State  string // $XDG_STATE_HOME/hub: daemon state, log, adapter records
	Cache  string // $XDG_CACHE_HOME
}

// DirsFromEnv resolves the directories from the environment, following the
// XDG base directory rules (relative XDG paths are ignored).
func DirsFromEnv() (Dirs, error) {
	home := os.Getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return Dirs{}, errors.New("cannot find the home directory: set HOME")
		}
		home = h
	}
	// A relative HOME means the caller's working directory's; resolved
	// now, it means the same to a detached hub, which runs in /.
	if !filepath.IsAbs(home) {
		abs, err := filepath.Abs(home)
		if err != nil {
			return Dirs{}, err
		}
		home = abs
	}
	xdg := func(env, fallback string) string {
		if v := os.Getenv(env); filepath.IsAbs(v) {
			return v
		}
		return filepath.Join(home, fallback)
	}
	return Dirs{
		Home:   home,
		Config: filepath.Join(xdg("XDG_CONFIG_HOME", ".config"), "hub"),
		State:  filepath.Join(xdg("XDG_STATE_HOME", filepath.Join(".local", "state")), "hub"),
		Cache:  xdg("XDG_CACHE_HOME", ".cache"),
	}, nil
}

// ExpandHome replaces a leading "~/" (or a lone "~") with home.
func ExpandHome(path, home string) string {
	if path == "~" {
		return home
	}
	if strings.HasPrefix(path, "~/") {
		return filepath.Join(home, path[2:])
	}
	return path
}
