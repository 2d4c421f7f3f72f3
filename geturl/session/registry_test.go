package session

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubdev/hub/hub"
)

// The registry decides project roots and their write and terminal
// permissions: one another user could change (group- or world-writable),
// or reached through a symlink, must be refused, not obeyed.
func TestUnsafeRegistryIsRefused(t *testing.T) {
	const planted = `{"version":1,"projects":[{"name":"web","root":"/","write":true,"terminal":true}],"sessions":[]}`
	dir := t.TempDir()

	loose := filepath.Join(dir, "loose.json")
	os.WriteFile(loose, []byte(planted), 0o600)
	os.Chmod(loose, 0o666)
	if _, err := Open(Options{Path: loose}); !errors.Is(err, hub.ErrUnsafeFile) {
		t.Errorf("Open(world-writable registry) = %v, want ErrUnsafeFile", err)
	}

	target := filepath.Join(dir, "target.json")
	os.WriteFile(target, []byte(planted), 0o600)
	link := filepath.Join(dir, "registry.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Options{Path: link}); !errors.Is(err, hub.ErrUnsafeFile) {
		t.Errorf("Open(symlinked registry) = %v, want ErrUnsafeFile", err)
	}

	// A private regular file is read as before.
	ok := filepath.Join(dir, "ok.json")
	os.WriteFile(ok, []byte(planted), 0o600)
	m, err := Open(Options{Path: ok})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Projects()); got != 1 {
		t.Errorf("projects = %d, want 1", got)
	}
}
