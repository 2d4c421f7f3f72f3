package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// vcsNames are the metadata directories of version-control systems whose
// contents can make the tool run commands (git's core.fsmonitor,
// core.hooksPath and hooks, Mercurial's [hooks], Jujutsu's and Bazaar's
// configuration), without their leading dot. A regular file of one of
// these names counts too: a .git file ("gitdir: ...") makes git use
// whatever directory it names.
var vcsNames = []string{"git", "hg", "svn", "jj", "bzr"}

// VCSComponent reports whether the path p names version-control metadata:
// whether one of its components, split at '/' and at '\' (a separator on
// Windows), is .git, .hg, .svn, .jj or .bzr as some file system would
// take it. It returns that component as it appears in p.
//
// A component is first reduced the way file systems reduce names before
// comparing them, then compared case-insensitively under every Unicode
// case mapping (so "ı", "İ", "ſ" and the Kelvin sign count for i, i, s
// and k):
//
//   - code points HFS+ ignores in names (zero-width joiners and
//     non-joiners, directional marks and overrides, U+206A..U+206F, the
//     byte-order mark) are dropped: ".g\u200cit" is ".git" on macOS;
//   - an NTFS alternate data stream is cut off (".git::$INDEX_ALLOCATION"
//     and ".git:x" open the directory .git on Windows);
//   - trailing dots and spaces are dropped (Windows drops them: ".git. "
//     is ".git");
//   - an NTFS short (8.3) name is taken for the long name it abbreviates:
//     "GIT~1" (and any "~N"), and the hashed form Windows falls back to
//     ("GI" followed by four hex digits, "~N").
//
// This is what git's verify_path guards against for .git (is_ntfs_dotgit,
// is_hfs_dotgit), applied to every file system at once and to the other
// systems' names: a project on Linux may be shared with, or copied to, a
// machine that folds names. It is pure: it looks at the string only.
func VCSComponent(p string) (string, bool) {
	for len(p) > 0 {
		i := strings.IndexAny(p, `/\`)
		name := p
		if i >= 0 {
			name, p = p[:i], p[i+1:]
		} else {
			p = ""
		}
		if isVCSName(name) {
			return name, true
		}
	}
	return "", false
}

// isVCSName reports whether one path component is a metadata name once
// reduced (see VCSComponent).
func isVCSName(name string) bool {
	var buf [64]rune // a name of more runes grows it on the heap
	folded := reduce(name, buf[:0])
	if len(folded) > 0 && folded[0] == '.' {
		return isOneOf(folded[1:])
	}
	if s, ok := parseShort(folded); ok {
		for _, v := range vcsNames {
			if s.of(v, "", false) {
				return true
			}
		}
	}
	return false
}

// reduce appends to buf the path component name as file systems compare
// names, and returns it: an NTFS stream cut off (from the first ':'), the
// code points HFS+ ignores dropped, every rune folded (see fold), and
// trailing dots and spaces dropped (Windows drops them).
func reduce(name string, buf []rune) []rune {
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	for _, r := range name {
		if !hfsIgnorable(r) {
			buf = append(buf, fold(r))
		}
	}
	for len(buf) > 0 && onlyTrailing(buf[len(buf)-1]) {
		buf = buf[:len(buf)-1]
	}
	return buf
}

// onlyTrailing reports the characters Windows drops from the end of a
// name.
func onlyTrailing(r rune) bool { return r == '.' || r == ' ' }

// isOneOf reports whether name (folded) is one of vcsNames.
func isOneOf(name []rune) bool {
	for _, v := range vcsNames {
		if equalRunes(name, v) {
			return true
		}
	}
	return false
}

// short is a reduced component shaped like an NTFS 8.3 short name:
// stem~digits, optionally .ext.
type short struct {
	stem, ext []rune
	digits    int
}

// parseShort splits a reduced component shaped like an NTFS 8.3 short
// name: a stem of one to six characters (seven less the digits when there
// are several), '~', one or more digits, and optionally '.' and an
// extension of one to three characters.
func parseShort(c []rune) (short, bool) {
	tilde := -1
	for i, r := range c {
		if r == '~' {
			tilde = i
			break
		}
	}
	if tilde < 1 || tilde > 6 {
		return short{}, false
	}
	rest := c[tilde+1:]
	d := 0
	for d < len(rest) && rest[d] >= '0' && rest[d] <= '9' {
		d++
	}
	if d == 0 {
		return short{}, false
	}
	ext := rest[d:]
	if len(ext) > 0 {
		if ext[0] != '.' || len(ext) < 2 || len(ext) > 4 {
			return short{}, false
		}
		ext = ext[1:]
		for _, r := range ext {
			if r == '.' {
				return short{}, false
			}
		}
	}
	return short{stem: c[:tilde], ext: ext, digits: d}, true
}

// of reports whether s is a short name Windows may generate for a long
// name whose base is base and whose extension is ext (lower case ASCII;
// the long name's leading dots, and the other dots of its base, removed;
// ext "" for a name without one). The stem is the base's first six
// characters (fewer beside several digits), or its first two and four
// hex digits of a hash; the extension is the first three of ext. With
// prefix set, base is only the beginning of the long name's base (a
// pattern such as mise.*.toml), so the stem may go on past it.
func (s short) of(base, ext string, prefix bool) bool {
	if !equalRunes(s.ext, ext[:min(len(ext), 3)]) {
		return false
	}
	l := len(s.stem)
	hi := min(len(base), 6)
	if prefix {
		hi = 6
	}
	if l >= min(len(base), 7-s.digits) && l <= hi && equalRunes(s.stem[:min(l, len(base))], base[:min(l, len(base))]) {
		return true
	}
	k := min(len(base), 2)
	return l == k+4 && equalRunes(s.stem[:k], base[:k]) && isHex(s.stem[k:])
}

func isHex(rs []rune) bool {
	for _, r := range rs {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

func equalRunes(rs []rune, s string) bool {
	if len(rs) != len(s) {
		return false
	}
	for i := range rs {
		if rs[i] != rune(s[i]) {
			return false
		}
	}
	return true
}

// fold maps r to the lower case of its upper case: every rune that any
// file system's case-insensitive comparison may take for an ASCII letter
// ends up as that letter ('ı' → 'I' → 'i', 'ſ' → 'S' → 's', the Kelvin
// sign → 'k'). Invalid UTF-8 stays utf8.RuneError and matches nothing.
func fold(r rune) rune {
	if r == utf8.RuneError {
		return r
	}
	return unicode.ToLower(unicode.ToUpper(r))
}

// hfsIgnorable reports the code points HFS+ ignores when it compares
// names (the list git's next_hfs_char uses).
func hfsIgnorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, // zero-width non-joiner, joiner; LRM, RLM
		r >= 0x202a && r <= 0x202e, // directional embeddings and overrides
		r >= 0x206a && r <= 0x206f, // deprecated format characters
		r == 0xfeff:                // zero-width no-break space (byte-order mark)
		return true
	}
	return false
}

// gitDirShaped reports whether the directory dir (a host path) is a git
// directory as git's discovery sees one (setup.c is_git_directory): it
// holds HEAD, an objects directory and a refs directory. Such a directory
// is a repository's metadata under whatever name it has: a .git symlinked
// to another directory of the project, a --separate-git-dir kept inside
// it, a bare repository embedded in it.
func gitDirShaped(dir string) bool {
	head, err := os.Lstat(filepath.Join(dir, "HEAD"))
	if err != nil || head.IsDir() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		fi, err := os.Stat(filepath.Join(dir, sub))
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}
