package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestVCSComponent: every spelling some file system takes for a metadata
// directory is caught, and names that merely resemble one are not.
func TestVCSComponent(t *testing.T) {
	for _, tc := range []struct {
		path string
		want string // "" when the path is not metadata
	}{
		{".git", ".git"},
		{".git/config", ".git"},
		{"a/b/.git/hooks/pre-commit", ".git"},
		{"sub/.git", ".git"}, // a gitdir file
		{".GIT/config", ".GIT"},
		{".Git", ".Git"},
		// Windows drops trailing dots and spaces.
		{".git./config", ".git."},
		{".git /config", ".git "},
		{".git. . ./config", ".git. . ."},
		// NTFS alternate data streams: .git::$INDEX_ALLOCATION is the directory.
		{".git::$INDEX_ALLOCATION/config", ".git::$INDEX_ALLOCATION"},
		{".git:stream", ".git:stream"},
		{".git . :$DATA", ".git . :$DATA"},
		// NTFS 8.3 short names.
		{"GIT~1/config", "GIT~1"},
		{"git~1", "git~1"},
		{"git~12/hooks", "git~12"},
		{"GI7EBA~1/config", "GI7EBA~1"},
		{"GIT~1./config", "GIT~1."},
		// HFS+ ignores these code points.
		{".g\u200cit/config", ".g\u200cit"},
		{"\u200d.git", "\u200d.git"},
		{".git\ufeff/config", ".git\ufeff"},
		{".\u202eg\u206ait\u200f", ".\u202eg\u206ait\u200f"},
		// Unicode case mappings that land on ASCII letters.
		{".g\u0131t/config", ".g\u0131t"}, // dotless i
		{".G\u0130T", ".G\u0130T"},        // capital I with dot above
		{".\u017fvn", ".\u017fvn"},        // long s
		// Windows separators.
		{`a\.git\config`, ".git"},
		{`.GIT\hooks`, ".GIT"},
		// The other systems.
		{".hg/hgrc", ".hg"},
		{".HG", ".HG"},
		{"HG~1/hgrc", "HG~1"},
		{".svn/entries", ".svn"},
		{"SVN~1", "SVN~1"},
		{".jj/repo/config.toml", ".jj"},
		{".bzr/branch/branch.conf", ".bzr"},
		{"BZR~2", "BZR~2"},
		{"x/.bzr.", ".bzr."},

		{"", ""},
		{"git", ""},
		{"git/config", ""},
		{".gitmodules", ""},
		{".gitignore", ""},
		{".gitattributes", ""},
		{".github/workflows/ci.yml", ""},
		{".git2", ""},
		{".gits", ""},
		{"x.git/config", ""},
		{"..git", ""},
		{". git", ""},
		{".git\u00a0", ""}, // no-break space is not dropped
		{".gi\u0307t", ""}, // a combining dot makes another name
		{"git~", ""},
		{"git~x", ""},
		{"gitx~1", ""},
		{"GI12345~1", ""},
		{"GIZZZZ~1", ""},
		{".hgignore", ""},
		{".hgtags", ""},
		{".svnignore", ""},
		{"hg", ""},
		{"src/main.go", ""},
		{"\xff.git", ""},
		{".g\xffit", ""},
	} {
		got, ok := VCSComponent(tc.path)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("VCSComponent(%q) = %q, %v; want %q", tc.path, got, ok, tc.want)
		}
	}
}

// FuzzVCSComponent: whatever the input, the answer names a component of
// it; a path is metadata exactly when one of its components is; and any
// dressing of a metadata name that a file system strips (case, HFS+
// ignorables, trailing dots and spaces, a stream) is still caught.
func FuzzVCSComponent(f *testing.F) {
	for _, s := range []string{".git/config", "a/b", `x\.GIT\y`, ".g\u200cit", "GIT~1", ".gitmodules", "", "/", "\xff"} {
		f.Add(s, []byte{0, 1, 2})
	}
	f.Fuzz(func(t *testing.T, p string, noise []byte) {
		got, ok := VCSComponent(p)
		if ok != (got != "") {
			t.Fatalf("VCSComponent(%q) = %q, %v", p, got, ok)
		}
		if ok && (!strings.Contains(p, got) || strings.ContainsAny(got, `/\`)) {
			t.Fatalf("VCSComponent(%q) = %q: not a component", p, got)
		}
		some := false
		for c := range strings.FieldsFuncSeq(p, func(r rune) bool { return r == '/' || r == '\\' }) {
			if _, yes := VCSComponent(c); yes {
				some = true
			}
		}
		if some != ok {
			t.Fatalf("VCSComponent(%q) = %v, but its components say %v", p, ok, some)
		}
		// Dress a metadata name with the noise bytes and hide it in p.
		name := dress("."+vcsNames[int(uint(len(noise))%uint(len(vcsNames)))], noise)
		for _, q := range []string{name, name + "/" + p, strings.Trim(p, `/\`) + "/" + name} {
			if _, ok := VCSComponent(q); !ok {
				t.Fatalf("VCSComponent(%q) = false", q)
			}
		}
	})
}

// dress applies to name what file systems ignore, steered by noise: case
// changes, HFS+ ignorable code points, trailing dots and spaces, a stream.
func dress(name string, noise []byte) string {
	ignorable := []rune{0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202e, 0x206a, 0x206f, 0xfeff}
	var b strings.Builder
	for i, r := range name {
		var n byte
		if i < len(noise) {
			n = noise[i]
		}
		if n&1 != 0 && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		if n&2 != 0 {
			b.WriteRune(ignorable[int(n>>4)%len(ignorable)])
		}
		b.WriteRune(r)
	}
	for _, n := range noise[min(len(noise), utf8.RuneCountInString(name)):] {
		switch n % 4 {
		case 0:
			b.WriteByte('.')
		case 1:
			b.WriteByte(' ')
		case 2:
			b.WriteRune(ignorable[int(n>>4)%len(ignorable)])
		}
	}
	if len(noise) > 0 && noise[0]&4 != 0 {
		b.WriteString("::$INDEX_ALLOCATION")
	}
	return b.String()
}

// TestResolveMutable: a path about to change is refused as metadata when
// it is named as such, when a symlink leads into metadata, and when it
// lies in a directory git takes for a git directory under another name;
// everything else resolves as ResolveNew does.
func TestResolveMutable(t *testing.T) {
	root := mustReal(t, t.TempDir())
	for rel, body := range map[string]string{
		".git/HEAD":         "ref: refs/heads/main\n",
		".git/config":       "[core]\n",
		".git/objects/.k":   "",
		".git/refs/.k":      "",
		"sub/.git":          "gitdir: ../.git/modules/sub\n",
		"sub/a.txt":         "a\n",
		"gitdata/HEAD":      "ref: refs/heads/main\n", // a --separate-git-dir kept in the project
		"gitdata/objects/k": "",
		"gitdata/refs/k":    "",
		"notgit/HEAD":       "not a repository, just a file named HEAD\n",
		".gitmodules":       "[submodule \"x\"]\n",
		"src/main.go":       "package main\n",
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"hooks": ".git/hooks", "meta": ".git", "gd": "gitdata"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		".git/config", ".git/hooks/pre-commit", "/project/.git/config", root + "/.git/config",
		".GIT/config", ".git./config", "GIT~1/config", ".g\u200cit/config",
		"sub/.git", "new/.git", "new/.git/config", ".hg/hgrc", ".svn/x", "src/.jj/x",
		"meta/config",            // a symlink into .git
		"hooks/post-checkout",    // a dangling path through a symlink into .git
		"gitdata/config",         // a git directory under another name
		"gd/hooks/pre-commit",    // ... reached through a symlink
		"gitdata/new/deeper.txt", // below it, not there yet
		"sub/../.git/config",
	} {
		// Nothing allows metadata, not even what a session with the
		// terminal is allowed.
		for _, allow := range []Allow{{}, {Autorun: true}} {
			if _, err := s.ResolveMutable(p, allow); !errors.Is(err, ErrVCSMetadata) || Code(err) != "vcs_metadata" {
				t.Errorf("ResolveMutable(%q, %+v) = %v, want vcs_metadata", p, allow, err)
			}
		}
	}
	for _, p := range []string{"src/main.go", "src/new.go", "sub/a.txt", ".gitmodules", ".gitignore", ".github/x.yml", "notgit/HEAD", "notgit/x"} {
		got, err := s.ResolveMutable(p, Allow{})
		want, werr := s.ResolveNew(p)
		if err != nil || werr != nil || got != want {
			t.Errorf("ResolveMutable(%q) = %+v, %v; ResolveNew = %+v, %v", p, got, err, want, werr)
		}
	}
	// Reads are not this function's business: ResolveExisting still
	// resolves metadata.
	if _, err := s.ResolveExisting(".git/config"); err != nil {
		t.Errorf("ResolveExisting(.git/config) = %v", err)
	}
}
