package sandbox

import (
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
	} {
		f.Add(s)
	}
	fx := newFixture(f)
	f.Fuzz(func(t *testing.T, p string) {
		check := func(kind string, got Path, err error) {
			if err != nil {
				if strings.Contains(err.Error(), fx.root) {
					t.Fatalf("%s(%q): error leaks the root", kind, p)
				}
				return
			}
			if !within(fx.root, got.Host) {
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
				if err == nil && !within(fx.root, real) {
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
		got, err = fx.scope.ResolveMutable(p)
		check("ResolveMutable", got, err)
		if rel, _ := fx.scope.Rel(got.Host); err == nil {
			if _, vcs := VCSComponent(rel); vcs {
				t.Fatalf("ResolveMutable(%q) = %q: version-control metadata", p, got.Host)
			}
		}
	})
}
