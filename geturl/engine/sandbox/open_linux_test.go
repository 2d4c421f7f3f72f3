package sandbox

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// A kernel without openat2 (or a seccomp profile that refuses it) falls
// back to the portable walk, which still refuses a link in the middle of
// the path; a fallback that guarded only the last component would open
// through it.
func TestOpenat2FallsBackToTheWalk(t *testing.T) {
	f := newFixture(t)
	for _, errno := range []syscall.Errno{syscall.ENOSYS, syscall.EPERM} {
		calls := 0
		o := openat2{call: func(int, string, *unixOpenHow) (int, error) { calls++; return -1, errno }}
		fd, err := o.Open(filepath.Join(f.root, "dirlink", "secret.txt"), syscall.O_RDONLY)
		if err == nil {
			syscall.Close(fd)
			t.Fatalf("%v: opened through a link", errno)
		}
		if !errors.Is(err, ErrSymlinkEscape) || calls != 1 {
			t.Fatalf("%v: %v after %d calls, want symlink_escape after 1", errno, err, calls)
		}
		fd, err = o.Open(filepath.Join(f.root, "src", "main.go"), syscall.O_RDONLY)
		if err != nil {
			t.Fatalf("%v: a plain file: %v", errno, err)
		}
		syscall.Close(fd)
	}
}
