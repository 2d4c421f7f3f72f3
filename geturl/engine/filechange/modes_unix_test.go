//go:build unix

package filechange

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestApplyModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	p := newProject(t, map[string]string{"run.sh": "echo a\n", "mv.sh": "echo m\n", "gone.sh": "x\n"})
	os.Chmod(filepath.Join(p.root, "run.sh"), 0o700)
	os.Chmod(filepath.Join(p.root, "mv.sh"), 0o751)
	os.Chmod(filepath.Join(p.root, "gone.sh"), 0o700)
	_, err := p.eng.ApplyPatch(context.Background(), `*** Begin Patch
*** Update File: run.sh
@@
-echo a
+echo b
*** Update File: mv.sh
*** Move to: bin/mv.sh
*** Add File: new.txt
+n
*** Delete File: gone.sh
*** Add File: gone.sh
+recreated
*** End Patch`)
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]os.FileMode{"run.sh": 0o700, "bin/mv.sh": 0o751, "new.txt": 0o644, "gone.sh": 0o644, "bin": 0o755} {
		if got := p.mode(rel).Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", rel, got, want)
		}
	}
}

// TestWriteModes: a new file gets 0666 less the umask, a replaced file
// keeps its permission bits.
func TestWriteModes(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	p := newProject(t, map[string]string{"run.sh": "#!/bin/sh\n"})
	os.Chmod(filepath.Join(p.root, "run.sh"), 0o751)
	ctx := context.Background()
	if _, err := p.eng.Write(ctx, "d/new.txt", "n"); err != nil {
		t.Fatal(err)
	}
	if m := p.mode("d/new.txt").Perm(); m != 0o640 {
		t.Errorf("new file mode %o, want 640 under umask 027", m)
	}
	if m := p.mode("d").Perm(); m != 0o750 {
		t.Errorf("new dir mode %o, want 750", m)
	}
	p.read("run.sh")
	if _, err := p.eng.Write(ctx, "run.sh", "#!/bin/sh\necho hi\n"); err != nil {
		t.Fatal(err)
	}
	if m := p.mode("run.sh").Perm(); m != 0o751 {
		t.Errorf("replaced file mode %o, want 751", m)
	}
	leftovers, _ := filepath.Glob(filepath.Join(p.root, ".geturl-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}
