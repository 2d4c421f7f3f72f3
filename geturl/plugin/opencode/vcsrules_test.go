package opencode

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/plugin"
)

// editDenier decides, as OpenCode would, whether the edit rules of the
// write-and-terminal ceiling deny an edit of a worktree-relative path;
// the patterns are compiled once, OpenCode's way.
type editDenier []*regexp.Regexp

func newEditDenier(t testing.TB) editDenier {
	var d editDenier
	for _, r := range Ceiling(plugin.Authority{Root: "/r", Write: true, Terminal: true}, false) {
		if !wildcardMatch("edit", r.Permission) {
			continue
		}
		if r.Action != "deny" {
			t.Fatalf("non-deny edit rule %+v", r)
		}
		re, err := wildcardRegexp(r.Pattern)
		if err != nil {
			t.Fatalf("pattern %q: %v", r.Pattern, err)
		}
		d = append(d, re)
	}
	return d
}

func (d editDenier) denies(p string) bool {
	p = strings.ReplaceAll(p, `\`, "/")
	return slices.ContainsFunc(d, func(re *regexp.Regexp) bool { return re.MatchString(p) })
}

// vcsCorpus are paths sandbox.VCSComponent takes for metadata, in every
// dressing it knows of, and paths it does not.
var vcsCorpus = []string{
	".git", ".git/config", "a/b/.git/hooks/pre-commit", "sub/.git", ".GIT/config", ".Git",
	".git./config", ".git /config", ".git. . ./config", ".git.", "a/.git ",
	".git::$INDEX_ALLOCATION/config", ".git:stream", ".git . :$DATA",
	"GIT~1/config", "git~1", "git~12/hooks", "GI7EBA~1/config", "GIT~1./config", "a/Gi7eba~3", "x/sV0a1b~1",
	".g\u200cit/config", "\u200d.git", ".git\ufeff/config", ".\u202eg\u206ait\u200f",
	".g\u0131t/config", ".G\u0130T", ".\u017fvn", "a/.\u017fVN/entries",
	`a\.git\config`, `.GIT\hooks`,
	".hg/hgrc", ".HG", "HG~1/hgrc", "hG1234~1", ".svn/entries", "SVN~1", ".jj/repo/config.toml", ".JJ", ".bzr/branch/branch.conf", "BZR~2", "x/.bzr.",
	"../outside/.git/config", "/abs/.git/config", `D:/work/.git/config`,

	"", "git", "git/config", ".gitmodules", ".gitignore", ".gitattributes", ".github/workflows/ci.yml",
	".git2", ".gits", "..git", ". git", ".git\u00a0", ".gi\u0307t", "git~", "git~x", "gitx~1", "GI12345~1", "GIZZZZ~1",
	".hgignore", ".hgtags", ".svnignore", ".bzrignore", "hg", "src/main.go", "docs/git/intro.md", ".gitkeep", ".git-blame-ignore-revs",
}

// Everything the file tools refuse as metadata, a worker of a caller with
// write and terminal may not edit either.
func TestVCSEditRulesCoverTheFileToolRule(t *testing.T) {
	d := newEditDenier(t)
	for _, p := range vcsCorpus {
		if _, vcs := sandbox.VCSComponent(p); vcs && !d.denies(p) {
			t.Errorf("%q is metadata but editable", p)
		}
	}
	// Kept editable on purpose, like the file tools keep them.
	for _, p := range []string{".gitignore", ".gitattributes", ".gitmodules", ".github/workflows/ci.yml", ".hgignore",
		".hgtags", ".svnignore", ".bzrignore", ".gitkeep", ".git-blame-ignore-revs", "src/main.go", "docs/git/intro.md", "git/config", "hg"} {
		if d.denies(p) {
			t.Errorf("%q denied", p)
		}
	}
}

// FuzzVCSEditRules: a path sandbox.VCSComponent takes for metadata is
// denied by the edit rules, and so is any dressing of a metadata name a
// file system strips, hidden anywhere in a path.
func FuzzVCSEditRules(f *testing.F) {
	for _, p := range vcsCorpus {
		f.Add(p, []byte{0, 1, 2})
	}
	d := newEditDenier(f)
	f.Fuzz(func(t *testing.T, p string, noise []byte) {
		if _, vcs := sandbox.VCSComponent(p); vcs && !d.denies(p) {
			t.Fatalf("%q is metadata but editable", p)
		}
		names := vcsNames()
		name := dressName("."+names[int(uint(len(noise))%uint(len(names)))], noise)
		for _, q := range []string{name, name + "/" + p, strings.Trim(p, `/\`) + "/" + name} {
			if _, vcs := sandbox.VCSComponent(q); !vcs {
				t.Fatalf("dressing %q is not metadata to the sandbox", q)
			}
			if !d.denies(q) {
				t.Fatalf("%q is metadata but editable", q)
			}
		}
	})
}

// dressName applies to name what file systems ignore, steered by noise:
// case under every mapping, HFS+ ignorable code points, trailing dots and
// spaces, a stream.
func dressName(name string, noise []byte) string {
	ign := hfsIgnorable()
	at := func(i int) byte {
		if i < len(noise) {
			return noise[i]
		}
		return 0
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		n := at(i)
		if n&0x80 != 0 {
			b.WriteRune(ign[int(n)%len(ign)])
		}
		sp := letterSpellings(name[i])
		b.WriteRune(sp[int(n)%len(sp)])
	}
	tail := at(len(name))
	for range tail & 3 {
		b.WriteString(". "[tail>>2&1 : tail>>2&1+1])
	}
	if tail&0x10 != 0 {
		b.WriteString("::$INDEX_ALLOCATION")
	}
	return b.String()
}

// The names and spellings are the sandbox's: the same metadata names (of
// up to four letters, every one is tried), the same case fold, the same
// ignorable code points.
func TestVCSSpellingsMatchSandbox(t *testing.T) {
	var names []string
	var word func(prefix string, n int)
	word = func(prefix string, n int) {
		if n == 0 {
			if _, ok := sandbox.VCSComponent("." + prefix); ok {
				names = append(names, prefix)
			}
			return
		}
		for c := 'a'; c <= 'z'; c++ {
			word(prefix+string(c), n-1)
		}
	}
	for n := 1; n <= 4; n++ {
		word("", n)
	}
	if want := vcsNames(); !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("sandbox metadata names %v, rules cover %v", names, want)
	}

	// Every rune with a case mapping, substituted for each letter of each
	// name: metadata to the sandbox exactly when a spelling of that letter.
	var cased []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.ToUpper(r) != r || unicode.ToLower(r) != r || unicode.SimpleFold(r) != r {
			cased = append(cased, r)
		}
	}
	for _, name := range vcsNames() {
		for i := 0; i < len(name); i++ {
			for _, r := range cased {
				_, vcs := sandbox.VCSComponent("." + name[:i] + string(r) + name[i+1:])
				if in := slices.Contains(letterSpellings(name[i]), r); vcs != in {
					t.Errorf("%q for %q in .%s: sandbox %v, spellings %v", r, name[i], name, vcs, in)
				}
			}
		}
	}
	for c := byte('a'); c <= 'z'; c++ {
		for _, r := range letterSpellings(c) {
			if unicode.ToLower(unicode.ToUpper(r)) != rune(c) {
				t.Errorf("%q is no spelling of %q", r, c)
			}
		}
	}

	// A code point inside ".git" leaves it metadata exactly when HFS+
	// ignores it.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		_, vcs := sandbox.VCSComponent(".g" + string(r) + "it")
		if in := slices.Contains(hfsIgnorable(), r); vcs != in {
			t.Errorf("%U inside .git: sandbox %v, ignorable %v", r, vcs, in)
		}
	}
}

// The Go rendering of OpenCode's Wildcard.match agrees with what OpenCode
// 1.18 does (packages/opencode/src/util/wildcard.ts).
func TestWildcardMatch(t *testing.T) {
	for _, tc := range []struct {
		s, pattern string
		want       bool
	}{
		{"edit", "edit", true},
		{"edit", "*", true},
		{"swarm_run", "swarm_*", true},
		{"a/b/.git/config", "*.git/*", true},
		{".git/config", "*.git/*", true},
		{".gitignore", "*.git/*", false},
		{".git", "*.git *", true}, // " *" at the end may match nothing
		{"a/.git  x", "*.git *", true},
		{".gitx", "*.git *", false},
		{`a\.git\config`, "*.git/*", true}, // '\' is '/'
		{"GI7EBA~1", "GI????~*", true},
		{"GI7EB~1", "GI????~*", false},
		{".GIT/config", "*.git/*", false}, // case-sensitive
		{"a\nb", "a*b", true},             // '*' crosses lines
		{"a.b", "a?b", true},
		{"a+b", "a+b", true}, // the rest is literal
		{"aab", "a+b", false},
		{"x(y)[z]{1}$^|", "x(y)[z]{1}$^|", true},
	} {
		if got := wildcardMatch(tc.s, tc.pattern); got != tc.want {
			t.Errorf("wildcardMatch(%q, %q) = %v", tc.s, tc.pattern, got)
		}
	}
}
