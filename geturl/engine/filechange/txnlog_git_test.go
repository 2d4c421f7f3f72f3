//go:build unix

package filechange

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hubdev/hub/geturl/internal/treetest"
)

// A log is a file in the project, so a cloned repository can ship one,
// with a "backup" beside it. Followed, it renames that file to a .git a
// checkout can never make: a gitdir pointer to a directory the repository
// also ships, whose config runs a command (core.fsmonitor) at the next git
// status in that directory. A step that would rename a file to .git, or to
// any path the engine refuses to change as version-control metadata, is
// never followed, even signed.
func TestRecoveryRefusesAGitPath(t *testing.T) {
	for name, tc := range map[string]struct{ log, bak string }{
		"a .git file":         {signedLog(nil, `[{"kind":"delete","rel":"sub/.git","bak":"sub/.geturl-bak-0123456789abcdef"}]`), "sub/.geturl-bak-0123456789abcdef"},
		"at the root":         {signedLog(nil, `[{"kind":"replace","rel":".git","bak":".geturl-bak-0123456789abcdef"}]`), ".geturl-bak-0123456789abcdef"},
		"in another case":     {signedLog(nil, `[{"kind":"delete","rel":"sub/.Git","bak":"sub/.geturl-bak-0123456789abcdef"}]`), "sub/.geturl-bak-0123456789abcdef"},
		"as Windows reads it": {signedLog(nil, `[{"kind":"delete","rel":"sub/.git. ","bak":"sub/.geturl-bak-0123456789abcdef"}]`), "sub/.geturl-bak-0123456789abcdef"},
		"inside .git":         {signedLog(nil, `[{"kind":"replace","rel":"evil/.git/config","bak":"evil/.git/.geturl-bak-0123456789abcdef"}]`), "evil/.git/.geturl-bak-0123456789abcdef"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for rel, data := range map[string]string{txnLogName: tc.log, tc.bak: "gitdir: ../evil\n", "evil/HEAD": "ref: refs/heads/main\n"} {
				os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755)
				if err := os.WriteFile(filepath.Join(root, rel), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := treetest.Snapshot(t, root)
			if _, err := Recover(root, nil); err == nil {
				t.Fatal("a log naming a .git path was followed")
			}
			treetest.Same(t, "tree", before, treetest.Snapshot(t, root))
		})
	}
}
