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
