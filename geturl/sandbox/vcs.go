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
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	var buf [64]rune // a name of more runes grows it on the heap
	folded := buf[:0]
	for _, r := range name {
		if !hfsIgnorable(r) {
			folded = append(folded, fold(r))
		}
	}
	for len(folded) > 0 && onlyTrailing(folded[len(folded)-1]) {
		folded = folded[:len(folded)-1]
	}
	if len(folded) > 0 && folded[0] == '.' {
		return isOneOf(folded[1:])
	}
	return isShortName(folded)
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

// isShortName reports whether name (folded) is an NTFS 8.3 short name of
// one of the metadata names: its first up to six characters and ~N, or
// the first two characters, four hex digits and ~N.
func isShortName(name []rune) bool {
	tilde := -1
	for i, r := range name {
		if r == '~' {
			tilde = i
			break
		}
	}
	if tilde < 0 || tilde == len(name)-1 {
		return false
	}
	for _, r := range name[tilde+1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	stem := name[:tilde]
	for _, v := range vcsNames {
		if equalRunes(stem, v[:min(len(v), 6)]) {
			return true
		}
		if len(stem) == 6 && equalRunes(stem[:2], v[:2]) && isHex(stem[2:]) {
			return true
		}
	}
	return false
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
