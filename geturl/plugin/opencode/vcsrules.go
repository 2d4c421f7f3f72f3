package opencode

import (
	"regexp"
	"strings"
)

// vcsNames are the version-control metadata names geturl's file tools
// never change (sandbox.VCSComponent), without their leading dot.
func vcsNames() []string { return []string{"git", "hg", "svn", "jj", "bzr"} }

// hfsIgnorable are the code points HFS+ ignores in names, which
// sandbox.VCSComponent drops before comparing (".g\u200cit" is ".git").
func hfsIgnorable() []rune {
	var rs []rune
	for _, span := range [][2]rune{{0x200c, 0x200f}, {0x202a, 0x202e}, {0x206a, 0x206f}, {0xfeff, 0xfeff}} {
		for r := span[0]; r <= span[1]; r++ {
			rs = append(rs, r)
		}
	}
	return rs
}

// letterSpellings are the runes a case-insensitive file system may take
// for an ASCII letter of vcsNames: the letter, its other case, and the
// runes whose upper case lowers to it ('ı' and 'İ' for i, 'ſ' for s),
// the fold sandbox.VCSComponent compares under.
func letterSpellings(c byte) []rune {
	switch c {
	case 'i':
		return []rune{'i', 'I', 'ı', 'İ'}
	case 's':
		return []rune{'s', 'S', 'ſ'}
	case 'k':
		return []rune{'k', 'K', 'K'}
	}
	if c >= 'a' && c <= 'z' {
		return []rune{rune(c), rune(c - 'a' + 'A')}
	}
	return []rune{rune(c)}
}

// spellings lists every spelling of the ASCII word w under
// letterSpellings.
func spellings(w string) []string {
	out := []string{""}
	for i := 0; i < len(w); i++ {
		var next []string
		for _, prefix := range out {
			for _, r := range letterSpellings(w[i]) {
				next = append(next, prefix+string(r))
			}
		}
		out = next
	}
	return out
}

// vcsEditPatterns are OpenCode permission patterns (its Wildcard syntax:
// '*' any run of characters, '/' included, '?' any one character, no
// classes, case-sensitive, '\' read as '/', and a trailing " *" that also
// matches nothing) matching every path, relative to the worktree as
// OpenCode's edit tools name it, that sandbox.VCSComponent takes for
// version-control metadata. Per spelling S of ".git", ".hg", ".svn",
// ".jj" and ".bzr" under every case mapping:
//
//   - "*S/*": anything inside it, at any depth;
//   - "*S *": the name itself (a .git gitdir file, the directory) and the
//     name followed by a space (Windows drops trailing spaces);
//   - "*S.*": followed by a dot (Windows drops trailing dots);
//   - "*S:*": an NTFS stream of it (".git::$INDEX_ALLOCATION");
//
// per spelling T of the names and "G" of their first two letters, the
// NTFS 8.3 short names "T~*" and "G????~*" at the start of a component;
// and "*c*" for each code point HFS+ ignores, since one may sit anywhere
// in the name.
//
// OpenCode's globs have no character classes and '*' crosses '/', so
// these deny more than the metadata: any name ending in ".git" (a bare
// repository's usual name) or holding ".git." or ".git " or ".git:", a
// path component starting "git~", and any path with an HFS-ignorable
// code point. None of .gitignore, .gitattributes, .gitmodules, .github/
// and .hgignore is matched.
func vcsEditPatterns() []string {
	var out []string
	for _, name := range vcsNames() {
		for _, s := range spellings("." + name) {
			out = append(out, "*"+s+"/*", "*"+s+" *", "*"+s+".*", "*"+s+":*")
		}
		for _, t := range spellings(name) {
			out = append(out, t+"~*", "*/"+t+"~*")
		}
		for _, g := range spellings(name[:2]) {
			out = append(out, g+"????~*", "*/"+g+"????~*")
		}
	}
	for _, r := range hfsIgnorable() {
		out = append(out, "*"+string(r)+"*")
	}
	return out
}

// isVCSEditRule reports whether r is one of the rules vcsEditPatterns
// derive, for showing a ceiling in short.
func isVCSEditRule(r Rule, patterns map[string]bool) bool {
	return r.Permission == "edit" && r.Action == "deny" && patterns[r.Pattern]
}

// wildcardMatch is OpenCode's Wildcard.match (1.18): whether s matches
// pattern, both with '\' read as '/'.
func wildcardMatch(s, pattern string) bool {
	re, err := wildcardRegexp(pattern)
	return err == nil && re.MatchString(strings.ReplaceAll(s, `\`, "/"))
}

// wildcardRegexp is the anchored regular expression OpenCode makes of a
// pattern: '*' any run of characters, '?' any one, the rest literal, and
// a pattern ending in " *" also matching without the space and what
// follows.
func wildcardRegexp(pattern string) (*regexp.Regexp, error) {
	expr := make([]string, 0, len(pattern))
	for _, r := range strings.ReplaceAll(pattern, `\`, "/") {
		switch r {
		case '*':
			expr = append(expr, ".*")
		case '?':
			expr = append(expr, ".")
		default:
			expr = append(expr, regexp.QuoteMeta(string(r)))
		}
	}
	if n := len(expr); n >= 2 && expr[n-1] == ".*" && expr[n-2] == " " {
		expr = append(expr[:n-2], "( .*)?")
	}
	return regexp.Compile(`(?s)^` + strings.Join(expr, "") + `$`)
}
