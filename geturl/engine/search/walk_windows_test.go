package search

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// On Windows, /f and /g walk the project through handles: names sorted
// bytewise, paths slash-separated, sizes from the listing, a junction and
// a symlink reported as symlinks and never entered, and the Go engine
// finds what rg finds. (Built and vetted on Linux; run on Windows only.)
func TestWindowsWalk(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	files := map[string]string{
		`B.txt`: "needle B\n", `a\z.txt`: "needle z\n", `a\Y.txt`: "no\n", `a-b.txt`: "needle\r\n",
		`node_modules\x.txt`: "needle\n", `é.txt`: "needle é\n",
	}
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("needle secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Depth first, names sorted bytewise: a's children before a-b.txt.
	want := []string{"/project/B.txt", "/project/a", "/project/a/Y.txt", "/project/a/z.txt", "/project/a-b.txt"}
	wantKind := map[string]string{"/project/a": "dir", "/project/a/z.txt": "file"}
	if out, err := exec.Command("cmd", "/d", "/c", "mklink", "/J", filepath.Join(root, "j"), outside).CombinedOutput(); err == nil {
		want = append(want, "/project/j")
		wantKind["/project/j"] = "symlink"
	} else {
		t.Logf("mklink /J: %v: %s", err, out)
	}
	if err := os.Symlink(outside, filepath.Join(root, "l")); err == nil {
		want = append(want, "/project/l")
		wantKind["/project/l"] = "symlink"
	} else {
		t.Logf("no symlink privilege: %v", err)
	}
	want = append(want, "/project/node_modules", "/project/é.txt")
	sc, err := sandbox.New(root)
	if err != nil {
		t.Fatal(err)
	}
	s := &Searcher{Scope: sc, Limits: testLimits}
	res, err := s.Find(context.Background(), FindRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Entries {
		got = append(got, e.Path)
		if k := wantKind[e.Path]; k != "" && e.Kind != k {
			t.Errorf("%s: kind %s, want %s", e.Path, e.Kind, k)
		}
		if e.Path == "/project/a/z.txt" && e.Size != int64(len(files[`a\z.txt`])) {
			t.Errorf("%s: size %d", e.Path, e.Size)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Find listed\n%q\nwant\n%q", got, want)
	}
	wantGrep := []string{"/project/B.txt", "/project/a/z.txt", "/project/a-b.txt", "/project/é.txt"}
	engines := []string{""}
	if rg, err := exec.LookPath("rg"); err == nil {
		engines = append(engines, rg)
	}
	for _, rg := range engines {
		s := &Searcher{Scope: sc, Limits: testLimits, RG: rg}
		gres, err := s.Grep(context.Background(), GrepRequest{Pattern: "needle"})
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, m := range gres.Matches {
			paths = append(paths, m.Path)
		}
		if !slices.Equal(paths, wantGrep) || (rg != "" && gres.Engine != "rg") {
			t.Errorf("Grep (%s) found %q, want %q", gres.Engine, paths, wantGrep)
		}
	}
}

// rg starts by path in a directory held with every directory above it:
// while held, none can be renamed (so none swapped for a junction), and
// a junction on the path is refused before rg starts.
func TestWindowsRGDirHeld(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	sc, err := sandbox.New(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(sc.Root(), "a", "b")
	cmdDir, release, err := rgDir(dir)
	if err != nil {
		t.Fatalf("rgDir(%s): %v", dir, err)
	}
	if cmdDir != dir {
		t.Errorf("rg starts in %s, want %s", cmdDir, dir)
	}
	for _, p := range []string{filepath.Join(sc.Root(), "a"), dir} {
		if err := os.Rename(p, p+"-moved"); err == nil {
			t.Errorf("renamed %s while held", p)
		}
	}
	release()
	if err := os.Rename(filepath.Join(sc.Root(), "a"), filepath.Join(sc.Root(), "a2")); err != nil {
		t.Errorf("rename after release: %v", err)
	}
	j := filepath.Join(sc.Root(), "j")
	if out, err := exec.Command("cmd", "/d", "/c", "mklink", "/J", j, outside).CombinedOutput(); err != nil {
		t.Skipf("mklink /J: %v: %s", err, out)
	}
	if _, release, err := rgDir(j); !errors.Is(err, sandbox.ErrSymlinkEscape) {
		if err == nil {
			release()
		}
		t.Errorf("rgDir through a junction: %v, want symlink_escape", err)
	}
}
