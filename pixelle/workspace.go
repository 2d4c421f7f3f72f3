package pixelle

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// MarkerFile is the workspace marker Pixelle writes into the project folder.
const MarkerFile = "pixelle.workspace.json"

// maxMarkerBytes bounds how much of the marker is read.
const maxMarkerBytes = 64 << 10

// Workspace is the verified working directory.
type Workspace struct {
	OK          bool   `json:"ok"`
	Directory   string `json:"directory"`
	WorkspaceID string `json:"workspaceId"`
}

// VerifyWorkspace reads MarkerFile in dir (read-only: it never creates,
// copies or edits it) and requires version 1 and exactly expect as the
// workspaceId. This is a consistency check, not authentication.
func VerifyWorkspace(dir, expect string) (Workspace, error) {
	if expect == "" {
		return Workspace{}, usageErr("USAGE", "--expect WORKSPACE_ID is required (it is in the Pixelle prompt)")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Workspace{}, failErr("WORKSPACE_UNREADABLE", "cannot resolve the working directory: %v", err)
	}
	path := filepath.Join(abs, MarkerFile)
	// O_NONBLOCK: a FIFO planted as the marker must be refused below as
	// not a regular file, not block the open waiting for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return Workspace{}, failErr("WORKSPACE_MARKER_MISSING", "%s has no %s: open the folder you selected in Pixelle and run this again there", abs, MarkerFile)
	}
	if err != nil {
		return Workspace{}, failErr("WORKSPACE_UNREADABLE", "cannot read %s: %v", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return Workspace{}, failErr("WORKSPACE_MARKER_INVALID", "%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxMarkerBytes+1))
	if err != nil {
		return Workspace{}, failErr("WORKSPACE_UNREADABLE", "cannot read %s: %v", path, err)
	}
	if len(data) > maxMarkerBytes {
		return Workspace{}, failErr("WORKSPACE_MARKER_INVALID", "%s is larger than %d bytes; it is not a Pixelle marker", path, maxMarkerBytes)
	}
	// A map, not a struct: encoding/json matches struct keys in any case,
	// and the page reads exactly marker.version and marker.workspaceId.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return Workspace{}, failErr("WORKSPACE_MARKER_INVALID", "%s is not a JSON object: %v", path, err)
	}
	m := struct{ Version, WorkspaceID json.RawMessage }{fields["version"], fields["workspaceId"]}
	// A JSON number equal to 1, as the page's `version === 1` reads it
	// (1.0 and 1e0 too); the string "1" is not.
	var version float64
	if json.Unmarshal(m.Version, &version) != nil || version != 1 {
		return Workspace{}, failErr("WORKSPACE_MARKER_INVALID", "%s has version %s; this client understands version 1", path, orMissing(m.Version))
	}
	var id string
	if len(m.WorkspaceID) == 0 || json.Unmarshal(m.WorkspaceID, &id) != nil || bytes.Equal(m.WorkspaceID, []byte("null")) {
		return Workspace{}, failErr("WORKSPACE_MARKER_INVALID", "%s has no string workspaceId", path)
	}
	if id != expect {
		return Workspace{}, failErr("WORKSPACE_MISMATCH", "%s belongs to workspace %q, not %q: open the folder you selected in Pixelle (do not edit the marker)", abs, id, expect)
	}
	return Workspace{OK: true, Directory: abs, WorkspaceID: expect}, nil
}

func orMissing(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "missing"
	}
	return string(raw)
}
