//go:build unix

package filechange

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/internal/treetest"
)

// rollbackTree and rollbackPatch touch every kind of commit step: replace,
// create with new parents, delete, and a move (create + delete).
var rollbackTree = map[string]string{
	"a.txt":     "a1\na2\n",
	"b.txt":     "b1\n",
	"gone.txt":  "gone\n",
	"mv/src.sh": "echo src\n",
}

const rollbackPatch = `*** Begin Patch
*** Update File: a.txt
@@
-a1
+A1
*** Add File: new/deep/n.txt
+n
*** Delete File: gone.txt
*** Update File: mv/src.sh
*** Move to: moved/dst.sh
@@
-echo src
+echo dst
*** Update File: b.txt
@@
-b1
+B1
*** End Patch`

// inode returns the inode of rel, to prove a rollback restored the very
// same file rather than a copy.
func (p *project) inode(rel string) uint64 {
	p.t.Helper()
	fi, err := os.Lstat(filepath.Join(p.root, rel))
	if err != nil {
		p.t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestRollbackAtEveryStep fails the commit at each of its file-system
// steps in turn and requires the project to be exactly as before: same
// bytes, modes and inodes, no new directories, no temporary or backup
// files.
func TestRollbackAtEveryStep(t *testing.T) {
	var steps []string
	{
		p := newProject(t, rollbackTree)
		p.eng.hook = func(op, rel string) error {
			// a failing link is not a failure (the backup is copied
			// instead), and finish only marks where a crash may come
			if op != "link" && op != "finish" {
				steps = append(steps, op+" "+rel)
			}
			return nil
		}
		if _, err := p.eng.ApplyPatch(context.Background(), rollbackPatch); err != nil {
			t.Fatal(err)
		}
	}
	if len(steps) < 10 {
		t.Fatalf("only %d steps: %v", len(steps), steps)
	}
	for k, step := range steps {
		t.Run(fmt.Sprintf("%02d %s", k, step), func(t *testing.T) {
			p := newProject(t, rollbackTree)
			os.Chmod(filepath.Join(p.root, "mv/src.sh"), 0o755)
			os.Chmod(filepath.Join(p.root, "a.txt"), 0o600)
			inodes := map[string]uint64{}
			for rel := range rollbackTree {
				inodes[rel] = p.inode(rel)
			}
			p.read("a.txt")
			before := treetest.Snapshot(t, p.root)
			n := 0
			p.eng.hook = func(op, rel string) error {
				if op == "link" || op == "finish" {
					return nil
				}
				if n++; n == k+1 {
					return syscall.EIO
				}
				return nil
			}
			_, err := p.eng.ApplyPatch(context.Background(), rollbackPatch)
			b := body(t, err)
			if codeOf(t, err) != CodeWriteFailed || !strings.Contains(b, `"rolledBack":true`) || !strings.Contains(b, "rolled back") {
				t.Fatalf("err = %s", b)
			}
			p.noHostPath("refusal", b)
			treetest.Same(t, "tree", before, treetest.Snapshot(t, p.root))
			for rel, ino := range inodes {
				if got := p.inode(rel); got != ino {
					t.Errorf("%s: inode %d, was %d", rel, got, ino)
				}
			}
			if _, err := p.eng.Write(context.Background(), "a.txt", "x"); err != nil {
				t.Errorf("a rolled-back patch cost the read coverage: %v", err)
			}
		})
	}
}

// TestRollbackOfARealFailure: mid-commit, the directory of the second file
// is swapped for a symlink leading out of the project. os.Root refuses to
// follow it, the write fails for real, the first file is restored, and
// nothing outside changes.
func TestRollbackOfARealFailure(t *testing.T) {
	p := newProject(t, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	p.writeTree(p.outside, map[string]string{"b.txt": "outside b\n"})
	outsideBefore := treetest.Snapshot(t, p.outside)
	p.eng.hook = func(op, rel string) error {
		if op == "backup" && rel == "sub/b.txt" {
			if err := os.Rename(filepath.Join(p.root, "sub"), filepath.Join(p.root, "sub.orig")); err != nil {
				return err
			}
			return os.Symlink(p.outside, filepath.Join(p.root, "sub"))
		}
		return nil
	}
	_, err := p.eng.ApplyPatch(context.Background(), "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: sub/b.txt\n@@\n-b\n+B\n*** End Patch")
	if codeOf(t, err) != CodeWriteFailed {
		t.Fatalf("err = %v", err)
	}
	p.noHostPath("refusal", body(t, err))
	if p.file("a.txt") != "a\n" {
		t.Error("the first file was not restored")
	}
	if p.file("sub.orig/b.txt") != "b\n" {
		t.Error("the second file changed")
	}
	treetest.Same(t, "outside", outsideBefore, treetest.Snapshot(t, p.outside))
}

// TestRollbackIncomplete: when undoing fails too, the answer says which
// files could not be restored and where their previous versions are.
func TestRollbackIncomplete(t *testing.T) {
	p := newProject(t, rollbackTree)
	p.read("b.txt")
	writes := 0
	p.eng.hook = func(op, rel string) error {
		switch {
		case op == "write":
			if writes++; writes == 3 {
				return syscall.EIO
			}
		case op == "restore" && rel == "a.txt":
			return syscall.EIO
		}
		return nil
	}
	_, err := p.eng.ApplyPatch(context.Background(), rollbackPatch)
	b := body(t, err)
	if codeOf(t, err) != CodeRollbackIncomplete || !strings.Contains(b, `"notRestored":["/project/a.txt"]`) || !strings.Contains(b, ".geturl-bak-") {
		t.Fatalf("err = %s", b)
	}
	p.noHostPath("refusal", b)
	if p.file("a.txt") != "A1\na2\n" {
		t.Fatal("a.txt should still hold the patched bytes")
	}
	baks, _ := filepath.Glob(filepath.Join(p.root, ".geturl-bak-*"))
	if len(baks) != 1 {
		t.Fatalf("backups %v", baks)
	}
	if b, _ := os.ReadFile(baks[0]); string(b) != "a1\na2\n" {
		t.Fatalf("backup holds %q", b)
	}
	if p.file("gone.txt") != "gone\n" || !p.missing("new") || !p.missing("moved") {
		t.Fatal("the other steps were not undone")
	}
	if _, err := p.eng.Write(context.Background(), "b.txt", "x"); codeOf(t, err) != CodeReadRequired {
		t.Fatalf("coverage kept after an incomplete rollback: %v", err)
	}
}

// TestBackupWithoutHardLinks: where a hard link cannot be made, the backup
// of a replaced file is a copy of its bytes and mode, and rollback
// restores them (here for a file the patch deleted and re-added, whose
// bytes the preflight never read).
func TestBackupWithoutHardLinks(t *testing.T) {
	const patch = "*** Begin Patch\n*** Delete File: a.txt\n*** Add File: a.txt\n+new\n*** Add File: z.txt\n+z\n*** End Patch"
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprint("fail=", fail), func(t *testing.T) {
			p := newProject(t, map[string]string{"a.txt": "a\n"})
			os.Chmod(filepath.Join(p.root, "a.txt"), 0o640)
			before := treetest.Snapshot(t, p.root)
			p.eng.hook = func(op, rel string) error {
				switch {
				case op == "link":
					return syscall.EPERM
				case fail && op == "write" && rel == "z.txt":
					return syscall.EIO
				}
				return nil
			}
			_, err := p.eng.ApplyPatch(context.Background(), patch)
			if fail {
				if codeOf(t, err) != CodeWriteFailed {
					t.Fatalf("err = %v", err)
				}
				treetest.Same(t, "tree", before, treetest.Snapshot(t, p.root))
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.file("a.txt") != "new\n" || p.mode("a.txt").Perm() != 0o644 {
				t.Fatalf("a.txt %q %v", p.file("a.txt"), p.mode("a.txt"))
			}
			if baks, _ := filepath.Glob(filepath.Join(p.root, ".geturl-*")); len(baks) > 0 {
				t.Fatalf("left behind: %v", baks)
			}
		})
	}
}

// TestRolledBackHintKeepsTheCause: a commit that fails for a reason that
// will not pass by itself (permission denied, a read-only file system) is
// rolled back, but its hint does not tell the agent to retry later.
func TestRolledBackHintKeepsTheCause(t *testing.T) {
	for _, c := range []struct {
		errno syscall.Errno
		code  string
		retry bool
	}{
		{syscall.EACCES, CodePermissionDenied, false},
		{syscall.EROFS, CodeReadOnlyFS, false},
		{syscall.EIO, CodeWriteFailed, true},
	} {
		p := newProject(t, rollbackTree)
		p.eng.hook = func(op, rel string) error {
			if op == "write" && rel == "b.txt" { // the last file: the others are undone
				return c.errno
			}
			return nil
		}
		_, err := p.eng.ApplyPatch(context.Background(), rollbackPatch)
		var te *fault.Error
		if !errors.As(err, &te) || te.Code != c.code || !strings.Contains(body(t, err), `"rolledBack":true`) {
			t.Fatalf("%v: err = %v", c.errno, err)
		}
		if te.Retryable != c.retry || strings.Contains(te.Hint, "retry") != c.retry {
			t.Errorf("%v: retryable %v, hint %q", c.errno, te.Retryable, te.Hint)
		}
		if !strings.Contains(te.Hint, "nothing was changed") {
			t.Errorf("%v: hint %q does not say the patch was undone", c.errno, te.Hint)
		}
	}
}

// crash is what the hook panics with to stop a commit dead, as kill -9
// would: nothing after the step runs, no rollback either.
type crash struct{}

// TestRecoveryAfterACrashAtEveryStep cuts a multi-file patch short at
// each of its file-system steps, as a crash would, and requires the next
// mutation (or geturl's start, Recover) to leave the project exactly as
// before the patch, or, when it was cut after its commit point, exactly as
// after it: same bytes and modes, no backup, temporary or log file.
func TestRecoveryAfterACrashAtEveryStep(t *testing.T) {
	var steps []string
	var after map[string]string
	{
		p := newProject(t, rollbackTree)
		p.eng.hook = func(op, rel string) error {
			steps = append(steps, op+" "+rel)
			return nil
		}
		if _, err := p.eng.ApplyPatch(context.Background(), rollbackPatch); err != nil {
			t.Fatal(err)
		}
		after = treetest.Snapshot(t, p.root)
	}
	if steps[0] != "write "+txnLogName || steps[len(steps)-1] != "finish ." {
		t.Fatalf("steps %v", steps)
	}
	for k, step := range steps {
		for _, via := range []string{"next mutation", "Recover"} {
			t.Run(fmt.Sprintf("%02d %s, then %s", k, step, via), func(t *testing.T) {
				p := newProject(t, rollbackTree)
				p.read("a.txt")
				want := treetest.Snapshot(t, p.root)
				if step == "finish ." {
					want = after
				}
				n := 0
				p.eng.hook = func(op, rel string) error {
					if n++; n == k+1 {
						panic(crash{})
					}
					return nil
				}
				func() {
					defer func() {
						if r := recover(); r != (crash{}) {
							t.Fatalf("the patch was not cut short: %v", r)
						}
					}()
					p.eng.ApplyPatch(context.Background(), rollbackPatch)
				}()
				p.eng.hook = nil
				if via == "Recover" {
					if _, err := Recover(p.root, nil); err != nil {
						t.Fatal(err)
					}
				} else {
					if _, err := p.eng.ApplyPatch(context.Background(), "*** Begin Patch\n*** Add File: other.txt\n+o\n*** End Patch"); err != nil {
						t.Fatal(err)
					}
					os.Remove(filepath.Join(p.root, "other.txt"))
				}
				treetest.Same(t, "tree", want, treetest.Snapshot(t, p.root))
			})
		}
	}
}

// A log this engine cannot have written (planted in the project, or
// damaged) is never followed: mutations are refused until it is moved
// aside, and nothing in the project moves.
func TestRecoveryRefusesAForeignLog(t *testing.T) {
	// What a cloned repository can ship: a well-formed log, with the
	// "backup" it names beside it, that would put the repository's bytes
	// over the user's own a.txt.
	const replaceA = `[{"kind":"replace","rel":"a.txt","bak":".geturl-bak-0123456789abcdef"}]`
	for name, log := range map[string]string{
		"not JSON":                 "{",
		"another version":          `{"v":3,"mac":"","steps":[]}`,
		"unsigned (the v1 format)": `{"v":1,"steps":` + replaceA + `}`,
		"no valid MAC":             `{"v":2,"mac":"` + strings.Repeat("0", 64) + `","steps":` + replaceA + `}`,
		"signed with another key":  signedLog(&LogKey{}, replaceA),
		"a backup elsewhere":       signedLog(nil, `[{"kind":"replace","rel":"a.txt","bak":"b.txt"}]`),
		"outside the root":         signedLog(nil, `[{"kind":"delete","rel":"../x","bak":"../.geturl-bak-0123456789abcdef"}]`),
	} {
		t.Run(name, func(t *testing.T) {
			p := newProject(t, rollbackTree)
			os.WriteFile(filepath.Join(p.root, ".geturl-bak-0123456789abcdef"), []byte("the repository's a.txt"), 0o644)
			os.WriteFile(filepath.Join(p.root, txnLogName), []byte(log), 0o600)
			before := treetest.Snapshot(t, p.root)
			if _, err := Recover(p.root, nil); err == nil {
				t.Fatal("a foreign log was followed")
			}
			_, err := p.eng.Write(context.Background(), "new.txt", "n")
			if codeOf(t, err) != CodeRollbackIncomplete {
				t.Fatalf("err = %v", err)
			}
			treetest.Same(t, "tree", before, treetest.Snapshot(t, p.root))
		})
	}
}

// signedLog is a stored log of steps (JSON) signed with key (nil: the
// process's, which engines built without one use).
func signedLog(key *LogKey, steps string) string {
	b, err := json.Marshal(txnLogFile{V: txnLogVersion, MAC: key.sign([]byte(steps)), Steps: json.RawMessage(steps)})
	if err != nil {
		panic(err)
	}
	return string(b)
}
