package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/internal/lazyre"
)

// Limits from the contract.
const (
	MaxEnabled     = 16
	MaxDefinitions = 64
	// MaxProjects bounds the registry too; the contract names no number, so
	// this one only keeps a hostile or runaway client from growing the
	// file without end.
	MaxProjects = 256
	// maxRegistryBytes bounds the file read at start.
	maxRegistryBytes = 1 << 20
)

// Project is one approved root with its permissions.
type Project struct {
	Name     string `json:"name"`
	Root     string `json:"root"` // canonical realpath
	Write    bool   `json:"write"`
	Terminal bool   `json:"terminal"`
	// Bridges is the opt-in to the hub's bridges as /k plugins; it holds
	// only with Write (a registry saying otherwise grants no bridges).
	Bridges bool `json:"bridges,omitempty"`
}

// permissions are what the project grants its sessions.
func (p Project) permissions() route.Permissions {
	return route.Permissions{Write: p.Write, Terminal: p.Terminal, Bridges: p.Bridges && p.Write}
}

// Definition is one persisted session: which project it serves, whether it
// is enabled. Its tokens are never stored.
type Definition struct {
	ID        string    `json:"id"`
	Project   string    `json:"project"`
	Label     string    `json:"label,omitempty"`
	Enabled   bool      `json:"enabled"`
	CreatedAt time.Time `json:"createdAt"`
}

// registry is the persisted document.
type registry struct {
	Version  int          `json:"version"`
	Projects []Project    `json:"projects"`
	Sessions []Definition `json:"sessions"`
}

// nameRE bounds project names to 40 characters: the name is part of the
// Init contract, which must stay within 1.6 KiB.
var nameRE = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$`)

// loadRegistry reads path; a missing file is an empty registry. A corrupt
// or oversized file is an error that names it, so nothing is silently lost.
func loadRegistry(path string) (registry, error) {
	reg := registry{Version: 1}
	// It says which roots an agent may write and run commands in: a
	// symlink, or a file another user could change, is refused, not obeyed.
	b, err := hub.ReadOwnFile(path, maxRegistryBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return reg, nil
	}
	if err != nil {
		return reg, err
	}
	if err := json.Unmarshal(b, &reg); err != nil {
		return reg, fmt.Errorf("%s is not a valid registry (%v); move it aside to start empty", path, err)
	}
	if reg.Version != 1 {
		return reg, fmt.Errorf("%s has registry version %d; this hub reads version 1", path, reg.Version)
	}
	return reg, nil
}

// save writes the registry atomically, 0600 under a 0700 directory.
func (r registry) save(path string) error {
	if err := hub.EnsurePrivateDir(filepath.Dir(path)); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return hub.WriteFileAtomic(path, append(b, '\n'), 0o600)
}

func (r *registry) project(name string) (int, bool) {
	for i := range r.Projects {
		if r.Projects[i].Name == name {
			return i, true
		}
	}
	return -1, false
}

func (r *registry) session(id string) (int, bool) {
	for i := range r.Sessions {
		if r.Sessions[i].ID == id {
			return i, true
		}
	}
	return -1, false
}

func (r *registry) enabledCount() int {
	n := 0
	for _, d := range r.Sessions {
		if d.Enabled {
			n++
		}
	}
	return n
}
