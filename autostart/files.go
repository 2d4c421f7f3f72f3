package autostart

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Options say where the user's entries live.
type Options struct {
	Home string // the user's home directory (absolute)
	// Getenv reads the environment: XDG_CONFIG_HOME for the XDG entry's
	// directory; for a LaunchAgent, the XDG base directories it passes on
	// to the hub (launchd starts agents without them). Nil reads none.
	Getenv func(string) string
}

func (o Options) getenv(k string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(k)
}

// xdgVars are the variables that decide where the hub keeps its config,
// state and caches: a hub started at login must use the ones the user's
// shells use, or `hub status` would not find it.
var xdgVars = []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"}

// launchAgentPath is a LaunchAgent plist's PATH: launchd's own
// (/usr/bin:/bin:/usr/sbin:/sbin) misses Homebrew's prefixes, where the
// programs the hub runs (rg, cloudflared, opencode) usually are.
const launchAgentPath = "/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"

// For returns the Manager of kind k for the user o describes: a
// LaunchAgent or XDG entry is a file under o.Home (or XDG_CONFIG_HOME);
// a Run value is in the registry, so only on Windows.
func For(k Kind, o Options) (*Manager, error) {
	if !filepath.IsAbs(o.Home) {
		return nil, fmt.Errorf("autostart: home directory %q is not absolute", o.Home)
	}
	switch k {
	case LaunchAgent:
		env := []string{"PATH=" + launchAgentPath}
		for _, k := range xdgVars {
			// Relative values are ignored, as the hub ignores them.
			if v := o.getenv(k); filepath.IsAbs(v) {
				env = append(env, k+"="+v)
			}
		}
		dir := filepath.Join(o.Home, "Library", "LaunchAgents")
		return New(k, fileStore{path: filepath.Join(dir, Label+".plist")}, env), nil
	case XDG:
		config := o.getenv("XDG_CONFIG_HOME")
		if !filepath.IsAbs(config) {
			config = filepath.Join(o.Home, ".config")
		}
		return New(k, fileStore{path: filepath.Join(config, "autostart", Label+".desktop")}, nil), nil
	case RunKey:
		store, err := openRunKey(Label)
		if err != nil {
			return nil, err
		}
		return New(k, store, nil), nil
	}
	return nil, fmt.Errorf("autostart: unknown kind %v", k)
}

// fileStore keeps the entry in one file, written atomically (0644, as
// launchd and desktop sessions expect; it holds no secret). A directory
// it has to create is made 0700.
type fileStore struct{ path string }

func (f fileStore) Where() string { return f.path }

func (f fileStore) Read() ([]byte, error) {
	r, err := os.Open(f.path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxEntry+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxEntry {
		return nil, fmt.Errorf("larger than %d bytes: not an entry hub wrote", maxEntry)
	}
	return data, nil
}

// Write replaces the file through a temporary file in the same directory
// and a rename: readers see the old entry or the new one, and a link at
// the path is replaced, not followed.
func (f fileStore) Write(data []byte) (err error) {
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.path)
}

func (f fileStore) Remove() error { return os.Remove(f.path) }

// Describe quotes argv for a person to read (not for a shell).
func Describe(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\"'\\$`") {
			parts[i] = fmt.Sprintf("%q", a)
		} else {
			parts[i] = a
		}
	}
	return strings.Join(parts, " ")
}
