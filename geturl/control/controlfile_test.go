package control

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubdev/hub/hub"
)

// The control file holds the control key and says where the CLI sends
// it: like the other bridges' control files it must be a private regular
// file, never one reached through a symlink or readable by others.
func TestControlFileMustBePrivate(t *testing.T) {
	d := hub.Dirs{State: t.TempDir()}
	if err := WriteFile(d, File{PID: 1, Port: 1, ControlPort: 2, Key: "k"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(d); err != nil {
		t.Fatalf("private control file: %v", err)
	}

	os.Chmod(FilePath(d), 0o644)
	if _, err := ReadFile(d); !errors.Is(err, hub.ErrUnsafeFile) {
		t.Errorf("control file readable by others: %v, want ErrUnsafeFile", err)
	}

	other := filepath.Join(t.TempDir(), "planted.json")
	os.WriteFile(other, []byte(`{"pid":1,"port":1,"controlPort":9,"key":"planted"}`), 0o600)
	os.Remove(FilePath(d))
	if err := os.Symlink(other, FilePath(d)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(d); !errors.Is(err, hub.ErrUnsafeFile) {
		t.Errorf("symlinked control file: %v, want ErrUnsafeFile", err)
	}
}
