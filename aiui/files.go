package aiui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hubdev/hub/hub"
)

// RegistrySchema is the registry file's schema version.
const RegistrySchema = 1

// RegistryEntry is $XDG_CACHE_HOME/aiui/mcp/<pid>.json: how the overlay discovers
// a running backend's port.
type RegistryEntry struct {
	Schema    int       `json:"schema"`
	PID       int       `json:"pid"`
	PPID      int       `json:"ppid"`
	Port      int       `json:"port"`
	CWD       string    `json:"cwd"`
	StartedAt time.Time `json:"startedAt"`
	Kind      string    `json:"kind"`
}

// cacheDir is $XDG_CACHE_HOME/aiui, where the backends' registry and the
// projects' traces live: the spec's ~/.cache/aiui when XDG_CACHE_HOME is
// unset (hub.Dirs resolves it), the user's cache dir when it is set.
func cacheDir(d hub.Dirs) string {
	if d.Cache == "" {
		return filepath.Join(d.Home, ".cache", "aiui")
	}
	return filepath.Join(d.Cache, "aiui")
}

// RegistryDir is $XDG_CACHE_HOME/aiui/mcp (the spec's ~/.cache/aiui/mcp
// by default).
func RegistryDir(d hub.Dirs) string { return filepath.Join(cacheDir(d), "mcp") }

// writeRegistryFile writes this backend's record, first removing the
// records of backends that died without removing theirs (kill -9): the
// overlay would otherwise keep finding ports nobody serves.
func (b *backend) writeRegistryFile() error {
	dir := RegistryDir(b.env.Dirs)
	if n := sweepRegistry(dir, b.pid); n > 0 {
		b.log.Info("removed registry records of dead backends", "dir", dir, "count", n)
	}
	b.regPath = filepath.Join(dir, strconv.Itoa(b.pid)+".json")
	data, _ := json.MarshalIndent(RegistryEntry{Schema: RegistrySchema, PID: b.pid, PPID: os.Getppid(), Port: b.port,
		CWD: b.cwd, StartedAt: b.started, Kind: b.s.Kind}, "", "  ")
	b.regData = append(data, '\n')
	return b.putRegistryFile()
}

// putRegistryFile writes the record into a dir made private (0700, ours,
// not a link) first: a discovery dir found looser is tightened.
func (b *backend) putRegistryFile() error {
	if err := hub.EnsurePrivateDir(filepath.Dir(b.regPath)); err != nil {
		return err
	}
	return hub.WriteFileAtomic(b.regPath, b.regData, 0o600)
}

// sweepRegistry removes the <pid>.json records in dir whose pid is not
// alive (other than self) and returns how many it removed. Other names are
// not ours to judge.
func sweepRegistry(dir string, self int) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		stem, ok := strings.CutSuffix(e.Name(), ".json")
		pid, err := strconv.Atoi(stem)
		if !ok || err != nil || pid <= 0 || strconv.Itoa(pid) != stem || pid == self || hub.PIDAlive(pid) {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}

func (b *backend) removeRegistryFile() {
	if b.regPath != "" {
		os.Remove(b.regPath)
	}
}

// ControlFile is $XDG_STATE_HOME/hub/aiui/control.json (0600 in a 0700
// dir): where the shell and MCP faces find the backend and its key. The
// key is fresh on every start.
type ControlFile struct {
	Schema    int       `json:"schema"`
	PID       int       `json:"pid"`
	Port      int       `json:"port"`
	Key       string    `json:"key"`
	StartedAt time.Time `json:"startedAt"`
	Kind      string    `json:"kind"`
	// PromptKey is the per-start key POST /prompt takes (Authorization:
	// Bearer): a weaker key than Key (it only speaks to the agent), fresh
	// with it. Required when the backend runs with require_prompt_key;
	// otherwise it marks its prompts as keyed.
	PromptKey string `json:"promptKey,omitempty"`
}

// maxControlFile bounds what a reader of the control file loads.
const maxControlFile = 64 << 10

// StateDir is the aiui state directory (control file, prompt record).
func StateDir(d hub.Dirs) string { return filepath.Join(d.State, "aiui") }

// ControlPath is the control file's path.
func ControlPath(d hub.Dirs) string { return filepath.Join(StateDir(d), "control.json") }

// writeControlFile writes the control file with a fresh key. The key
// takes effect once the file is written: a client refused for the old
// key re-reads the file (Client.relocate).
func (b *backend) writeControlFile() error {
	b.controlPath = ControlPath(b.env.Dirs)
	return b.newControlKey()
}

// newControlKey writes the control file with a fresh key and prompt key.
func (b *backend) newControlKey() error {
	key, pkey := hub.RandomToken(32), hub.RandomToken(32)
	if err := hub.EnsurePrivateDir(StateDir(b.env.Dirs)); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(ControlFile{Schema: 1, PID: b.pid, Port: b.port, Key: key, StartedAt: b.started, Kind: b.s.Kind,
		PromptKey: pkey}, "", "  ")
	data = append(data, '\n')
	if err := hub.WriteFileAtomic(b.controlPath, data, 0o600); err != nil {
		return err
	}
	b.mu.Lock()
	b.controlData = data
	b.mu.Unlock()
	b.key.Store(&key)
	b.pkey.Store(&pkey)
	return nil
}

// controlFileData is the control file as this backend wrote it last.
func (b *backend) controlFileData() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.controlData
}

// promptKey is the key POST /prompt takes ("" before the control file is
// written, which no request matches).
func (b *backend) promptKey() string {
	if k := b.pkey.Load(); k != nil {
		return *k
	}
	return ""
}

// controlKey is the key the control routes want ("" before the file is
// written, which no request matches).
func (b *backend) controlKey() string {
	if k := b.key.Load(); k != nil {
		return *k
	}
	return ""
}

func (b *backend) putControlFile() error {
	if err := hub.EnsurePrivateDir(filepath.Dir(b.controlPath)); err != nil {
		return err
	}
	return hub.WriteFileAtomic(b.controlPath, b.controlFileData(), 0o600)
}

// FileCheckInterval is how often a running backend checks its registry
// record and control file.
const FileCheckInterval = 2 * time.Second

// keepFiles keeps a running backend findable: on k (or, when k is nil,
// every interval) it rewrites
// its registry record when that is missing or not what it wrote, and the
// control file when it is missing, corrupt or unsafe, or names a dead
// process or this one with another key. A control file naming another live
// process is left alone: a later backend took it over. Without this, a
// deleted record hid a live backend from the overlay, and a deleted control
// file from every shell and MCP face. It returns when ctx is done.
func (b *backend) keepFiles(ctx context.Context, k *hub.FileKeeper, every time.Duration) {
	hub.KeepFiles(ctx, k, every, b.log,
		hub.KeptFile{Name: "the registry record", Path: b.regPath, Check: func() (string, func() error) {
			return b.registryDrift(), b.putRegistryFile
		}},
		hub.KeptFile{Name: "the control file", Path: b.controlPath, Check: func() (string, func() error) {
			why, exposed := b.controlDrift()
			if exposed {
				return why, b.newControlKey // others could read (or replace) the key: a new one
			}
			return why, b.putControlFile
		}})
}

// registryDrift says why the registry record needs rewriting ("" if not).
func (b *backend) registryDrift() string {
	got, err := hub.ReadPrivateFile(b.regPath, maxControlFile)
	switch {
	case err != nil:
		return err.Error()
	case !bytes.Equal(got, b.regData):
		return "its content changed"
	}
	return ""
}

// controlDrift says why the control file needs rewriting ("" if not), and
// whether it was exposed: a link, or a file others could read or write,
// may have given the key away.
func (b *backend) controlDrift() (why string, exposed bool) {
	data, err := hub.ReadPrivateFile(b.controlPath, maxControlFile)
	if err != nil {
		return err.Error(), errors.Is(err, hub.ErrUnsafeFile)
	}
	var cf ControlFile
	switch {
	case json.Unmarshal(data, &cf) != nil:
		return "it is corrupt", false
	case cf.PID == b.pid && hub.SecretEqual(cf.Key, b.controlKey()):
		if !bytes.Equal(data, b.controlFileData()) {
			return "its content changed", false
		}
		return "", false
	case cf.PID != b.pid && hub.PIDAlive(cf.PID):
		return "", false // another live backend's now
	case cf.PID == b.pid:
		return "it names this process with another key", false
	}
	return "it names a dead process", false
}

// removeControlFile removes the control file only when it is still ours
// (a later backend may have replaced it).
func (b *backend) removeControlFile() {
	data, err := hub.ReadPrivateFile(b.controlPath, maxControlFile)
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		return
	}
	var cf ControlFile
	if json.Unmarshal(data, &cf) == nil && hub.SecretEqual(cf.Key, b.controlKey()) {
		os.Remove(b.controlPath)
	}
}
