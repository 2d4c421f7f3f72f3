package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A directory on a resolved path renamed for a link to outside after the
// check (the race a local process could run): Open refuses the path,
// where a plain open would read the outside file through the link.
func TestOpenRefusesALinkSwappedInAfterResolving(t *testing.T) {
	f := newFixture(t)
	if err := os.WriteFile(filepath.Join(f.outside, "x.txt"), []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := f.scope.ResolveExisting("src/deep/x.txt")
	if err != nil {
		t.Fatal(err)
	}
	fd, err := Open(p.Host, syscall.O_RDONLY)
	if err != nil {
		t.Fatalf("the resolved path itself: %v", err)
	}
	syscall.Close(fd)

	deep := filepath.Join(f.root, "src", "deep")
	if err := os.Rename(deep, deep+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.outside, deep); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p.Host); err != nil || string(b) != "outside" {
		t.Fatalf("the fixture: a plain open reads %q, %v", b, err)
	}
	fd, err = Open(p.Host, syscall.O_RDONLY)
	if err == nil {
		syscall.Close(fd)
		t.Fatal("opened through a link swapped in after resolving")
	}
	if !errors.Is(err, ErrSymlinkEscape) || Code(err) != "symlink_escape" {
		t.Fatalf("error %v (%q), want symlink_escape", err, Code(err))
	}
	if fd, err := Open(filepath.Join(f.root, "link_in.txt"), syscall.O_RDONLY); err == nil {
		syscall.Close(fd)
		t.Fatal("opened a final-component link")
	}
	if _, err := Open(filepath.Join(f.root, "missing"), syscall.O_RDONLY); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}
