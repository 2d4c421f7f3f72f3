package companion

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/hubdev/hub/hub"
)

// FileName is the companion state file, beside the session registry.
const FileName = "companion.json"

// maxFile bounds what is read of companion.json: MaxDevices devices and
// MaxDevices*MaxBindings+keepEnded bindings are far below it.
const maxFile = 1 << 20

// Bounds of the persisted state.
const (
	MaxDevices  = 32 // paired devices
	MaxBindings = 16 // live bindings per device
	keepEnded   = 64 // ended bindings kept as history
)

// fileState is companion.json.
type fileState struct {
	Version  int             `json:"version"`
	Devices  []deviceRecord  `json:"devices"`
	Bindings []bindingRecord `json:"bindings"`
}

// deviceRecord is a paired device: the SHA-256 of its secret, never the
// secret.
type deviceRecord struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Hash     string    `json:"hash"` // hex SHA-256 of the device secret
	Paired   time.Time `json:"paired"`
	LastSeen time.Time `json:"last_seen"`
}

// bindingRecord is a conversation bound to a session, live (Ended zero)
// or history.
type bindingRecord struct {
	ID           string    `json:"id"`
	Device       string    `json:"device"`
	Project      string    `json:"project"`
	Session      string    `json:"session"`
	Conversation string    `json:"conversation"`
	Created      time.Time `json:"created"`
	Ended        time.Time `json:"ended,omitzero"`
}

// loadFile reads companion.json; a missing file is an empty state. Any
// other failure (unsafe mode or owner, a symlink, corrupt JSON, a record
// that breaks the rules) is an error: the caller trusts no device then.
func loadFile(path string) (fileState, error) {
	b, err := hub.ReadPrivateFile(path, maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return fileState{Version: 1}, nil
	}
	if err != nil {
		return fileState{}, err
	}
	var st fileState
	if err := json.Unmarshal(b, &st); err != nil {
		return fileState{}, fmt.Errorf("%s is corrupt: %v", path, err)
	}
	if st.Version != 1 {
		return fileState{}, fmt.Errorf("%s has version %d, want 1", path, st.Version)
	}
	if len(st.Devices) > MaxDevices {
		return fileState{}, fmt.Errorf("%s lists %d devices, at most %d are allowed", path, len(st.Devices), MaxDevices)
	}
	seen := map[string]bool{}
	for _, d := range st.Devices {
		if !validID(d.ID, 'd') || seen[d.ID] || len(d.Hash) != 64 || checkName(d.Name) != nil {
			return fileState{}, fmt.Errorf("%s has a malformed device record", path)
		}
		if _, err := decodeHex(d.Hash); err != nil {
			return fileState{}, fmt.Errorf("%s has a malformed device hash", path)
		}
		seen[d.ID] = true
	}
	return st, nil
}

// save writes companion.json atomically, 0600.
func (st fileState) save(path string) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return hub.WriteFileAtomic(path, append(b, '\n'), 0o600)
}
