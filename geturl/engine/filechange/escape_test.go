package filechange

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/internal/treetest"
)

// escapeProject is a project whose links lead out of it in every way the
// sandbox must refuse, next to an outside tree the attempts aim at.
func escapeProject(t *testing.T) *project {
	p := newProject(t, map[string]string{"in.txt": "in\n", "src/a.go": "package a\n"})
	p.writeTree(p.outside, map[string]string{"secret.txt": "secret\n", "sub/x.txt": "x\n"})
	p.writeTree(p.root, map[string]string{
		"link_out_file": "->" + filepath.Join(p.outside, "secret.txt"),
		"link_out_dir":  "->" + p.outside,
		"dangling_out":  "->" + filepath.Join(p.outside, "new.txt"),
		"rel_out":       "->../" + filepath.Base(p.outside), // t.TempDir siblings share a parent
		"src/up":        "->../..",
	})
	return p
}

var escapeCodes = map[string]bool{"path_traversal": true, "path_outside_scope": true, "symlink_escape": true}

// TestEscapesChangeNothing tries every way out through every tool and
// requires a sandbox refusal, an unchanged project and an unchanged
// outside tree, and no host path in the answer that the request did not
// itself contain.
func TestEscapesChangeNothing(t *testing.T) {
	p := escapeProject(t)
	out := func(rel string) string { return filepath.Join(p.outside, rel) }
	existing := []string{
		"../secret.txt", "/project/../secret.txt", "src/../../secret.txt",
		out("secret.txt"), "link_out_file", "/project/link_out_file",
		"link_out_dir/secret.txt", "link_out_dir/sub/../secret.txt", "rel_out/secret.txt",
		"src/up/" + filepath.Base(p.outside) + "/secret.txt",
	}
	fresh := []string{
		"../new.txt", out("new.txt"), out("sub/new.txt"), "dangling_out",
		"link_out_dir/new.txt", "link_out_dir/deep/er/new.txt", "rel_out/new.txt",
		"link_out_dir/sub/x.txt",
	}
	type attempt struct {
		name string
		path string
		run  func(path string) error
	}
	var attempts []attempt
	ctx := context.Background()
	patch := func(body string) error {
		_, err := p.eng.ApplyPatch(ctx, "*** Begin Patch\n"+body+"*** End Patch")
		return err
	}
	for _, path := range append(existing, fresh...) {
		attempts = append(attempts,
			attempt{"write", path, func(x string) error { _, err := p.eng.Write(ctx, x, "pwned\n"); return err }},
			attempt{"add", path, func(x string) error { return patch("*** Add File: " + x + "\n+pwned\n") }},
			attempt{"move to", path, func(x string) error {
				return patch("*** Update File: in.txt\n*** Move to: " + x + "\n@@\n-in\n+pwned\n")
			}},
			// A valid first section must not be committed when a later one
			// escapes: the preflight refuses the whole patch.
			attempt{"add after a valid section", path, func(x string) error {
				return patch("*** Add File: ok.txt\n+fine\n*** Add File: " + x + "\n+pwned\n")
			}},
		)
	}
	for _, path := range existing {
		attempts = append(attempts,
			attempt{"edit", path, func(x string) error { _, err := p.eng.Edit(ctx, x, "secret", "pwned"); return err }},
			attempt{"update", path, func(x string) error { return patch("*** Update File: " + x + "\n@@\n-secret\n+pwned\n") }},
			attempt{"delete", path, func(x string) error { return patch("*** Delete File: " + x + "\n") }},
			attempt{"move from", path, func(x string) error { return patch("*** Update File: " + x + "\n*** Move to: stolen.txt\n") }},
		)
	}
	p.read("in.txt")
	for _, a := range attempts {
		t.Run(a.name+" "+strings.ReplaceAll(strings.TrimPrefix(a.path, p.outside), "/", "|"), func(t *testing.T) {
			inBefore, outBefore := treetest.Snapshot(t, p.root), treetest.Snapshot(t, p.outside)
			err := a.run(a.path)
			if code := codeOf(t, err); !escapeCodes[code] {
				t.Fatalf("code %q: %v", code, err)
			}
			b := body(t, err)
			if strings.Contains(b, p.root) || (!strings.Contains(a.path, p.outside) && strings.Contains(b, p.outside)) {
				t.Errorf("answer leaks a host path: %s", b)
			}
			treetest.Same(t, "tree", inBefore, treetest.Snapshot(t, p.root))
			treetest.Same(t, "outside", outBefore, treetest.Snapshot(t, p.outside))
		})
	}
}

// TestEscapeLinksThemselvesAreNotTargets: a link inside the project whose
// target is outside cannot be deleted or moved as if it were a file, and
// overwriting it does not write through it.
func TestEscapeLinksThemselvesAreNotTargets(t *testing.T) {
	p := escapeProject(t)
	outBefore := treetest.Snapshot(t, p.outside)
	for _, path := range []string{"link_out_file", "dangling_out"} {
		p.read("in.txt")
		if _, err := p.eng.Write(context.Background(), path, "x"); !escapeCodes[codeOf(t, err)] {
			t.Errorf("write %s: %v", path, err)
		}
	}
	treetest.Same(t, "outside", outBefore, treetest.Snapshot(t, p.outside))
}
