package hub

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// A hub started with its own XDG_STATE_HOME is found by clients that get
// only HOME and PATH (an MCP client that passes nothing else through)
// through a pointer it leaves in the default state dir: WhereFileName,
// naming its state and log dirs. Clients resolve the default dirs, and
// follow the pointer (Locate) only when no hub has its state file there.

// WhereFileName is the pointer's name in the default state dir.
const WhereFileName = "where.json"

// hubStateFile is the running hub's own record in its state dir (the
// supervisor's StateFileName): a pointer is followed only to a dir that
// holds one, and never away from a dir that does.
const hubStateFile = "hub.json"

// maxWhereFile bounds the pointer read (two paths and a pid).
const maxWhereFile = 8 << 10

type where struct {
	State string `json:"state"`
	Log   string `json:"log"`
	PID   int    `json:"pid"`
}

// DefaultDirs are d's directories as a client with only HOME (and on
// Windows its usual profile variables) resolves them: no XDG variable.
func DefaultDirs(home string) Dirs {
	return DirsFor(runtime.GOOS, home, func(k string) string {
		if strings.HasPrefix(k, "XDG_") {
			return ""
		}
		return os.Getenv(k)
	})
}

// Publish leaves the pointer to d in the default state dir when d.State is
// not that dir, so clients without the XDG variables find this hub, and
// returns what removes it again (only while it still names d and this
// process). A hub in the default dir is found there and leaves none.
func Publish(d Dirs) (unpublish func(), err error) {
	def := DefaultDirs(d.Home)
	if filepath.Clean(def.State) == filepath.Clean(d.State) {
		return func() {}, nil
	}
	if err := EnsurePrivateDir(def.State); err != nil {
		return nil, err
	}
	w := where{State: d.State, Log: d.Log, PID: os.Getpid()}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(def.State, WhereFileName)
	if err := WriteFileAtomic(path, append(b, '\n'), 0o600); err != nil {
		return nil, err
	}
	return func() {
		if cur, err := readWhere(path); err == nil && cur == w {
			os.Remove(path)
		}
	}, nil
}

// Locate returns d with State and Log moved to where the pointer in
// d.State names, when d.State (a default state dir) holds no hub's state
// file and a verified pointer names a dir that does. Anything unverified
// is ignored, and d returned as it is: the pointer must be a private file
// (owned by this user, 0600, not a link) in a private dir, and name
// absolute, clean, private dirs of this user, not links.
func Locate(d Dirs) Dirs {
	if exists(filepath.Join(d.State, hubStateFile)) {
		return d
	}
	if CheckPrivateDir(d.State) != nil {
		return d
	}
	w, err := readWhere(filepath.Join(d.State, WhereFileName))
	if err != nil {
		return d
	}
	for _, dir := range []string{w.State, w.Log} {
		if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || CheckPrivateDir(dir) != nil {
			return d
		}
	}
	if !exists(filepath.Join(w.State, hubStateFile)) {
		return d
	}
	d.State, d.Log = w.State, w.Log
	return d
}

func readWhere(path string) (where, error) {
	b, err := ReadPrivateFile(path, maxWhereFile)
	if err != nil {
		return where{}, err
	}
	var w where
	if err := json.Unmarshal(b, &w); err != nil {
		return where{}, err
	}
	if w.State == "" || w.Log == "" {
		return where{}, errors.New("incomplete pointer")
	}
	return w, nil
}

// exists reports whether path names something (a link counts: the state
// file's own checks refuse it later, loudly).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
