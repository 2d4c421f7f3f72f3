package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolve checks the one property that matters: whatever the agent
// sends, a successful resolution lands inside the root, and the virtual path
// names no host location.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"a.txt", ".", "/project", "/project/../x", "../x", "src/../../x", "link_etc/passwd",
		"dirlink/secret.txt", "chain1/deep/x.txt", "dangling_out", "dangling_in", "loop1/x",
		`C:\x`, `..\..\x`, "a\x00b", "/etc/passwd", "src//deep/./x.txt", "rel_out/x",
		"/project/dirlink/../a.txt", "link_abs_in/../../x", "dangling_in_deep/../x",
		".git/config", ".GIT./hooks/x", "src/../.git", `GIT~1\config`,
		".claude/settings.json", "opencode.json", `VSCODE~1\tasks.json`, "src/.Opencode/plugin/x.ts",
	} {
		f.Add(s)
	}
	fx := newFixture(f)
	// Editor configuration kept elsewhere in the project: what it leads
	// to is configuration too.
	editor := filepath.Join(fx.root, "src", "deep")
	if err := os.Symlink("src/deep", filepath.Join(fx.root, ".vscode")); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		check := func(kind string, got Path, err error) {
			if err != nil {
				if strings.Contains(err.Error(), fx.root) {
					t.Fatalf("%s(%q): error leaks the root", kind, p)
				}
				return
			}
			if !fx.scope.Contains(got.Host) {
				t.Fatalf("%s(%q) = %q: outside the root", kind, p, got.Host)
			}
			if !strings.HasPrefix(got.Virtual, VirtualRoot) || strings.Contains(got.Virtual, fx.root) {
				t.Fatalf("%s(%q): virtual %q", kind, p, got.Virtual)
			}
			if got.Exists {
				real, err := filepath.EvalSymlinks(got.Host)
				if kind == "ResolveLink" && got.Host != fx.root {
					real, err = filepath.EvalSymlinks(filepath.Dir(got.Host))
				}
				if err == nil && !fx.scope.Contains(real) {
					t.Fatalf("%s(%q): realpath %q outside the root", kind, p, real)
				}
			}
		}
		got, err := fx.scope.ResolveExisting(p)
		check("ResolveExisting", got, err)
		got, err = fx.scope.ResolveNew(p)
		check("ResolveNew", got, err)
		got, err = fx.scope.ResolveLink(p)
		check("ResolveLink", got, err)
		got, err = fx.scope.ResolveMutable(p, Allow{})
		check("ResolveMutable", got, err)
		if rel, _ := fx.scope.Rel(got.Host); err == nil {
			if _, vcs := VCSComponent(rel); vcs {
				t.Fatalf("ResolveMutable(%q) = %q: version-control metadata", p, got.Host)
			}
			if _, auto := AutorunComponent(rel); auto || hostRules().within(editor, got.Host) {
				t.Fatalf("ResolveMutable(%q) = %q: autorun configuration", p, got.Host)
			}
		}
		wide, werr := fx.scope.ResolveMutable(p, Allow{Autorun: true})
		check("ResolveMutable(Autorun)", wide, werr)
		if err == nil && (werr != nil || wide != got) {
			t.Fatalf("ResolveMutable(%q): allowing more refused %v (%+v, narrow %+v)", p, werr, wide, got)
		}
		if rel, _ := fx.scope.Rel(wide.Host); werr == nil {
			if _, vcs := VCSComponent(rel); vcs {
				t.Fatalf("ResolveMutable(%q, Autorun) = %q: version-control metadata", p, wide.Host)
			}
		}
	})
}
