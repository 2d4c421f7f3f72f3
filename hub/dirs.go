package hub

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Dirs are the hub's own locations. Protocol-mandated paths (such as
// ~/.stitchslop or aiui's registry) stay where their specs put them and are
// derived from Home.
//
// Where each lives depends on the OS (see DirsFor): the XDG base
// directories on Linux; the platform's own places on macOS and Windows,
// unless the XDG variable for that directory is set, which wins everywhere.
type Dirs struct {
	Home   string // the user's home directory
	Config string // hub.yaml: $XDG_CONFIG_HOME/hub
	State  string // daemon state, adapter records, pairings: $XDG_STATE_HOME/hub (0700)
	Log    string // hub.log and its rotated copies: the State dir on Linux (0700)
	Cache  string // the base cache dir ($XDG_CACHE_HOME); users add their own name
}

// DirsFromEnv resolves the directories from the environment for this OS
// (DirsFor), and then, when XDG_STATE_HOME is unset, follows the pointer a
// running hub started with another state dir left in the default one
// (Locate): a client given only HOME and PATH finds that hub.
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
	d := DirsFor(runtime.GOOS, home, os.Getenv)
	if !filepath.IsAbs(os.Getenv("XDG_STATE_HOME")) {
		d = Locate(d)
	}
	return d, nil
}

// DirsFor is where the hub keeps its files on goos for a user whose home
// is home, reading variables through getenv. An XDG variable that is set
// to an absolute path names its directory on every OS (relative ones are
// ignored, as the XDG spec says):
//
//	           Linux                  macOS                                   Windows
//	Config     ~/.config/hub          ~/Library/Application Support/hub       %APPDATA%\hub
//	State      ~/.local/state/hub     ~/Library/Application Support/hub/state %LOCALAPPDATA%\hub\state
//	Log        (the State dir)        ~/Library/Logs/hub                      %LOCALAPPDATA%\hub\logs
//	Cache      ~/.cache               ~/Library/Caches                        %LOCALAPPDATA%
//
// XDG_CONFIG_HOME sets Config; XDG_STATE_HOME sets State and Log (Log is
// then the State dir); XDG_CACHE_HOME sets Cache.
func DirsFor(goos, home string, getenv func(string) string) Dirs {
	abs := func(env string) (string, bool) {
		v := getenv(env)
		return v, filepath.IsAbs(v) || (goos == "windows" && isWindowsAbs(v))
	}
	d := Dirs{Home: home}
	var config, state, logs, cache string
	switch goos {
	case "darwin", "ios":
		lib := filepath.Join(home, "Library")
		config = filepath.Join(lib, "Application Support", "hub")
		state = filepath.Join(lib, "Application Support", "hub", "state")
		logs = filepath.Join(lib, "Logs", "hub")
		cache = filepath.Join(lib, "Caches")
	case "windows":
		local, ok := abs("LOCALAPPDATA")
		if !ok {
			local = filepath.Join(home, "AppData", "Local")
		}
		roaming, ok := abs("APPDATA")
		if !ok {
			roaming = filepath.Join(home, "AppData", "Roaming")
		}
		config = filepath.Join(roaming, "hub")
		state = filepath.Join(local, "hub", "state")
		logs = filepath.Join(local, "hub", "logs")
		cache = local
	default: // Linux and the other unixes: the XDG defaults
		config = filepath.Join(home, ".config", "hub")
		state = filepath.Join(home, ".local", "state", "hub")
		logs = state
		cache = filepath.Join(home, ".cache")
	}
	if v, ok := abs("XDG_CONFIG_HOME"); ok {
		config = filepath.Join(v, "hub")
	}
	if v, ok := abs("XDG_STATE_HOME"); ok {
		state = filepath.Join(v, "hub")
		logs = state
	}
	if v, ok := abs("XDG_CACHE_HOME"); ok {
		cache = v
	}
	d.Config, d.State, d.Log, d.Cache = config, state, logs, cache
	return d
}

// isWindowsAbs reports whether p is an absolute Windows path (C:\… or
// \\server\…) whatever OS reads it, so DirsFor means the same in tests.
func isWindowsAbs(p string) bool {
	if strings.HasPrefix(p, `\\`) {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		('a' <= p[0]|0x20 && p[0]|0x20 <= 'z')
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
