//go:build linux

package mutation_test

import (
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hubdev/hub/geturl/engine/filechange"
	"github.com/hubdev/hub/geturl/internal/treetest"
	"github.com/hubdev/hub/geturl/transport"
)

// A patch that fails in its commit phase — the second file cannot be
// written (a file-size limit the process runs under, which binds root
// too) — has its first file's write rolled back: through the route, the
// project ends exactly as it began, same inode included.
func TestPatchCommitFailureRollsBack(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 64<<10/17*16) // about 1 MiB
	e := newEnv(t, rw, map[string]string{"a.txt": "a1\na2\n", "big.txt": big + "tail\n"})
	before := treetest.Snapshot(t, e.root)
	ino := inode(t, filepath.Join(e.root, "a.txt"))

	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	signal.Ignore(syscall.SIGXFSZ) // EFBIG instead of a killed process
	defer signal.Reset(syscall.SIGXFSZ)
	lim := syscall.Rlimit{Cur: 256 << 10, Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	p := "*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+A1\n*** Update File: big.txt\n@@\n-tail\n+TAIL\n*** End Patch\n"
	a := e.settled(e.m + "/a?wait=1500&raw=" + transport.Encode(p)) // settled before the limit goes
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	if a.OK || a.State != "failed" || a.ErrorCode == filechange.CodeRollbackIncomplete || !strings.Contains(a.raw, `"rolledBack":true`) {
		t.Fatalf("%s", a.raw)
	}
	treetest.Same(t, "after a failed commit", before, treetest.Snapshot(t, e.root))
	if inode(t, filepath.Join(e.root, "a.txt")) != ino {
		t.Fatal("a.txt was restored as a copy, not the same file")
	}
	// Nothing of the commit's temporary or backup files is left.
	ents, _ := os.ReadDir(e.root)
	for _, d := range ents {
		if strings.HasPrefix(d.Name(), ".geturl") {
			t.Fatalf("%s left behind", d.Name())
		}
	}
	// With the limit gone, the retry URL applies the same patch.
	if a.Retry == "" {
		t.Fatalf("no retry: %s", a.raw)
	}
	e.done(a.Retry)
	if e.file("a.txt") != "A1\na2\n" || !strings.HasSuffix(e.file("big.txt"), "TAIL\n") {
		t.Fatal("retry did not apply")
	}
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}
