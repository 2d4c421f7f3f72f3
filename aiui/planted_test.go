package aiui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/hub"
)

// TestPlantedControlFileRefused is issue 15 rows 6–8 for aiui's control
// file, which holds the control key: readable by others, a symlink, or
// (as root) another user's, the faces refuse it and say how to fix it
// instead of using its key.
func TestPlantedControlFileRefused(t *testing.T) {
	h, _ := start(t, nil)
	path := ControlPath(h.Dirs)
	if _, err := Locate(context.Background(), h.Dirs); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644)
	_, err := Locate(context.Background(), h.Dirs)
	if !errors.Is(err, hub.ErrUnsafeFile) || !strings.Contains(err.Error(), path+" is mode 0644; it holds a key") {
		t.Fatalf("Locate with a 0644 control file = %v", err)
	}
	os.Chmod(path, 0o600)

	real := filepath.Join(t.TempDir(), "control.json")
	b, _ := os.ReadFile(path)
	os.WriteFile(real, b, 0o600)
	os.Remove(path)
	os.Symlink(real, path)
	if _, err := Locate(context.Background(), h.Dirs); !errors.Is(err, hub.ErrUnsafeFile) || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Locate with a symlinked control file = %v", err)
	}
	os.Remove(path)

	if os.Geteuid() == 0 {
		os.WriteFile(path, b, 0o600)
		os.Chown(path, 65534, 65534)
		if _, err := Locate(context.Background(), h.Dirs); !errors.Is(err, hub.ErrUnsafeFile) || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Fatalf("Locate with another user's control file = %v", err)
		}
		os.Remove(path)
	}
}
