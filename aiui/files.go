package aiui

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hubdev/hub/hub"
)

// RegistrySchema is the registry file's schema version.
const RegistrySchema = 1

// RegistryEntry is ~/.cache/aiui/mcp/<pid>.json: how the overlay discovers
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

// RegistryDir is ~/.cache/aiui/mcp (the spec's path, under HOME).
func RegistryDir(home string) string { return filepath.Join(home, ".cache", "aiui", "mcp") }

func (b *backend) writeRegistryFile() error {
	dir := RegistryDir(b.env.Dirs.Home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b.regPath = filepath.Join(dir, strconv.Itoa(b.pid)+".json")
	data, _ := json.MarshalIndent(RegistryEntry{Schema: RegistrySchema, PID: b.pid, PPID: os.Getppid(), Port: b.port,
		CWD: b.cwd, StartedAt: b.started, Kind: b.s.kind}, "", "  ")
	return hub.WriteFileAtomic(b.regPath, append(data, '\n'), 0o600)
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
}

// maxControlFile bounds what a reader of the control file loads.
const maxControlFile = 64 << 10

// StateDir is the aiui state directory (control file, prompt record).
func StateDir(d hub.Dirs) string { return filepath.Join(d.State, "aiui") }

// ControlPath is the control file's path.
func ControlPath(d hub.Dirs) string { return filepath.Join(StateDir(d), "control.json") }

func (b *backend) writeControlFile() error {
	b.key = hub.RandomToken(32)
	if err := hub.EnsurePrivateDir(StateDir(b.env.Dirs)); err != nil {
		return err
	}
	b.controlPath = ControlPath(b.env.Dirs)
	data, _ := json.MarshalIndent(ControlFile{Schema: 1, PID: b.pid, Port: b.port, Key: b.key, StartedAt: b.started, Kind: b.s.kind}, "", "  ")
	return hub.WriteFileAtomic(b.controlPath, append(data, '\n'), 0o600)
}

// removeControlFile removes the control file only when it is still ours
// (a later backend may have replaced it).
func (b *backend) removeControlFile() {
	data, err := hub.ReadPrivateFile(b.controlPath, maxControlFile)
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		return
	}
	var cf ControlFile
	if json.Unmarshal(data, &cf) == nil && hub.SecretEqual(cf.Key, b.key) {
		os.Remove(b.controlPath)
	}
}
