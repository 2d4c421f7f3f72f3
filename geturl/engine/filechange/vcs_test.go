package filechange

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/internal/treetest"
)

// vcsTree is a repository: its .git (a real one's shape), a submodule's
// gitdir file, symlinks into .git, and ordinary files beside them.
var vcsTree = map[string]string{
	".git/HEAD":               "ref: refs/heads/main\n",
	".git/config":             "[core]\n\tbare = false\n",
	".git/objects/.keep":      "",
	".git/refs/heads/.keep":   "",
	".git/hooks/pre-commit":   "#!/bin/sh\n",
	".git/modules/sub/HEAD":   "ref: refs/heads/main\n",
	".git/modules/sub/config": "[core]\n",
	"sub/.git":                "gitdir: ../.git/modules/sub\n",
	"sub/a.txt":               "a\n",
	"a.txt":                   "a\n",
	"meta":                    "->.git",
	"hooks":                   "->.git/hooks",
	".gitmodules":             "[submodule \"sub\"]\n\tpath = sub\n",
}

// TestMutationsRefuseVCSMetadata: every way the engine changes a file —
// /w, /e, each section of /a (Add, Update, Delete, Move to and from) — is
// refused with vcs_metadata for version-control metadata however it is
// spelled or reached, and nothing at all changes, not even the other
// files of a patch.
func TestMutationsRefuseVCSMetadata(t *testing.T) {
	const fsmonitor = "[core]\n\tfsmonitor = \"id > pwned.txt; false\"\n"
	patch := func(body string) string { return "*** Begin Patch\n" + body + "*** End Patch" }
	cases := map[string]func(e *Engine) error{
		"write .git/config": func(e *Engine) error { _, err := e.Write(context.Background(), ".git/config", fsmonitor); return err },
		"write a hook": func(e *Engine) error {
			_, err := e.Write(context.Background(), ".git/hooks/post-checkout", "id\n")
			return err
		},
		"write .GIT/config": func(e *Engine) error { _, err := e.Write(context.Background(), ".GIT/config", fsmonitor); return err },
		"write GIT~1":       func(e *Engine) error { _, err := e.Write(context.Background(), "GIT~1/config", fsmonitor); return err },
		"write .git.":       func(e *Engine) error { _, err := e.Write(context.Background(), ".git./config", fsmonitor); return err },
		"write an ADS": func(e *Engine) error {
			_, err := e.Write(context.Background(), ".git::$INDEX_ALLOCATION/config", fsmonitor)
			return err
		},
		"write HFS+ .git": func(e *Engine) error {
			_, err := e.Write(context.Background(), ".g\u200cit/config", fsmonitor)
			return err
		},
		"write a gitdir file": func(e *Engine) error {
			_, err := e.Write(context.Background(), "new/.git", "gitdir: ../.git\n")
			return err
		},
		"write through a symlink": func(e *Engine) error { _, err := e.Write(context.Background(), "meta/config", fsmonitor); return err },
		"write a dangling hook":   func(e *Engine) error { _, err := e.Write(context.Background(), "hooks/post-merge", "id\n"); return err },
		"write .hg/hgrc":          func(e *Engine) error { _, err := e.Write(context.Background(), ".hg/hgrc", "[hooks]\n"); return err },
		"write .svn":              func(e *Engine) error { _, err := e.Write(context.Background(), "x/.svn/entries", "x"); return err },
		"edit .git/config": func(e *Engine) error {
			_, err := e.Edit(context.Background(), ".git/config", "bare = false", "fsmonitor = \"id > pwned.txt; false\"")
			return err
		},
		"edit a gitdir file": func(e *Engine) error {
			_, err := e.Edit(context.Background(), "sub/.git", "modules/sub", "modules/evil")
			return err
		},
		"edit a submodule's config": func(e *Engine) error {
			_, err := e.Edit(context.Background(), ".git/modules/sub/config", "[core]", "[core]\n\tfsmonitor = id")
			return err
		},
		"patch adds a hook": func(e *Engine) error {
			_, err := e.ApplyPatch(context.Background(), patch("*** Add File: .git/hooks/post-checkout\n+id > pwned.txt\n"))
			return err
		},
		"patch updates the config": func(e *Engine) error {
			_, err := e.ApplyPatch(context.Background(), patch("*** Update File: .git/config\n@@\n-\tbare = false\n+\tfsmonitor = id\n"))
			return err
		},
		"patch deletes from .git": func(e *Engine) error {
			_, err := e.ApplyPatch(context.Background(), patch("*** Delete File: .git/hooks/pre-commit\n"))
			return err
		},
		"patch creates a gitdir file": func(e *Engine) error {
			_, err := e.ApplyPatch(context.Background(), patch("*** Add File: x/.git\n+gitdir: ../.git\n"))
			return err
		},
		"patch moves into .git": func(e *Engine) error {
			_, err := e.ApplyPatch(context.Background(), patch("*** Update File: a.txt\n*** Move to: .git/hooks/post-merge\n@@\n-a\n+id\n"))
			return err
		},
		"patch moves out of .git": func(e *Engine) error {
			_, err := e.ApplyPatch(context.Background(), patch("*** Update File: .git/hooks/pre-commit\n*** Move to: pre-commit.sh\n@@\n-#!/bin/sh\n+#!/bin/bash\n"))
			return err
		},
		"patch renames a gitdir file": func(e *Engine) error {
			_, err := e.ApplyPatch(context.Background(), patch("*** Update File: sub/a.txt\n*** Move to: sub2/.git\n@@\n-a\n+gitdir: ../.git\n"))
			return err
		},
		// A good section first: the whole patch is refused, and the good
		// section does not land either.
		"patch with a good section first": func(e *Engine) error {
			_, err := e.ApplyPatch(context.Background(), patch("*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: b.txt\n+b\n*** Add File: sub/.Git/hooks/pre-commit\n+id\n"))
			return err
		},
	}
	for name, run := range cases {
		t.Run(name, func(t *testing.T) {
			p := newProject(t, vcsTree)
			p.read(".git/config") // a whole-file overwrite has the coverage it needs
			before := treetest.Snapshot(t, p.root)
			err := run(p.eng)
			var te *fault.Error
			if err == nil {
				t.Fatal("not refused")
			}
			te, _ = err.(*fault.Error)
			if te == nil || te.Code != "vcs_metadata" || te.Retryable || te.Hint != VCSHint {
				t.Fatalf("err = %s", body(t, err))
			}
			b, _ := json.Marshal(te)
			p.noHostPath("refusal", string(b))
			treetest.Same(t, "tree", before, treetest.Snapshot(t, p.root))
		})
	}
}

// TestMutationsBesideVCSMetadata: the refusal is about metadata only:
// .gitmodules, .gitignore and the files of a submodule are changed as
// usual.
func TestMutationsBesideVCSMetadata(t *testing.T) {
	p := newProject(t, vcsTree)
	if _, err := p.eng.Edit(context.Background(), ".gitmodules", "path = sub", "path = sub\n\tbranch = main"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.eng.Write(context.Background(), ".gitignore", "*.o\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.eng.ApplyPatch(context.Background(), "*** Begin Patch\n*** Update File: sub/a.txt\n@@\n-a\n+A\n*** Add File: .github/workflows/ci.yml\n+on: push\n*** End Patch"); err != nil {
		t.Fatal(err)
	}
	if p.file("sub/a.txt") != "A\n" || p.file(".gitignore") != "*.o\n" {
		t.Fatal("not written")
	}
}
