package pixelle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// TestPlantedCredentialRefused is issue 15 rows 6–8 for the stored agent
// credential: a symlink to a file of ours, or (as root) another user's
// file, is refused like a loose mode already was.
func TestPlantedCredentialRefused(t *testing.T) {
	st := NewCredentialStore(adaptertest.TempDirs(t))
	cr := Credentials{SessionID: "s", Token: "t", URL: "http://127.0.0.1:1"}
	if err := st.Save(cr); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(t.TempDir(), "agent.json")
	os.Rename(st.Path(), real)
	os.Symlink(real, st.Path())
	if _, err := st.Load(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("a symlinked credential: %v", err)
	}
	os.Remove(st.Path())
	if os.Geteuid() == 0 {
		st.Save(cr)
		os.Chown(st.Path(), 65534, 65534)
		if _, err := st.Load(); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Fatalf("another user's credential: %v", err)
		}
	}
}
