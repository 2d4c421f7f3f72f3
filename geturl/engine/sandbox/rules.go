package sandbox

import (
	"path"
	"strings"
	"unicode/utf8"
)

// rules are how the host's file systems take a path: how an agent's path
// is judged and cleaned, and how two host paths compare. A Scope holds
// the host's (hostRules, one per OS); the rules themselves are portable
// code, so the Linux tests run Windows' as well.
type rules struct {
	// windows: '\' separates host paths and, with '/', an agent's path;
	// absolute paths have a drive; names compare without case; and some
	// names are devices, streams or aliases of other names.
	windows bool
}

// sep is the host path separator.
func (r rules) sep() byte {
	if r.windows {
		return '\\'
	}
	return '/'
}

// agent judges an agent's path p that is neither empty, nor holds a NUL
// byte, nor is longer than MaxPathBytes. It is either relative to the
// root (a virtual "/project/..." path, or a plain relative one): clean is
// then that relative path, '/'-separated, without "." or ".." components
// ("." for the root itself), and abs is false; or it is a native absolute
// path: clean is that path cleaned, in the host's spelling, and abs is
// true. Anything else is refused with an *Error.
func (r rules) agent(p string) (clean string, abs bool, err error) {
	if r.windows {
		return windowsAgent(p)
	}
	return unixAgent(p)
}

// unixAgent: '/' separates, every other byte is a name's.
func unixAgent(p string) (string, bool, error) {
	var rel string
	switch {
	case p == VirtualRoot || strings.HasPrefix(p, VirtualRoot+"/"):
		rel = strings.TrimLeft(p[len(VirtualRoot):], "/")
	case strings.HasPrefix(p, "/"):
		c := path.Clean(p)
		if err := checkNames(c); err != nil {
			return "", false, err
		}
		return c, true, nil
	default:
		rel = p
	}
	c := path.Clean(rel)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", false, newErr(ErrTraversal)
	}
	if err := checkNames(c); err != nil {
		return "", false, err
	}
	return c, false, nil
}

func checkNames(p string) error {
	for name := range strings.SplitSeq(p, "/") {
		if len(name) > MaxNameBytes {
			return newErr(ErrPathTooLong)
		}
	}
	return nil
}

// windowsAgent judges p as Windows would take it, and accepts only paths
// whose every name means one file:
//
//   - '/' and '\' both separate (so `..\..\x` climbs);
//   - the virtual root is "/project" or `\project`;
//   - a native absolute path is a drive letter, ':' and a separator
//     (`C:\src\x`, `c:/src/x`); the drive letter is upper-cased;
//   - every other rooted form names something outside the project:
//     UNC shares and the device namespaces (`\\server\share`, `\\?\`,
//     `\\.\`, `\??\`), a path rooted on the current drive (`\x`, `/x`)
//     and a drive-relative one (`C:x`, `C:`): ErrOutsideScope;
//   - a relative path may not climb above the root: ErrTraversal;
//   - every name, even one a later ".." cancels, is judged by
//     windowsName (devices, streams, trailing dots and spaces, short
//     names, characters NTFS cannot hold).
func windowsAgent(p string) (string, bool, error) {
	if !utf8.ValidString(p) {
		return "", false, newErr(ErrInvalidName)
	}
	if rest, ok := virtualRest(p); ok {
		return windowsClean("", rest)
	}
	switch {
	case isWinSep(p[0]):
		// `\\server\share`, `\\?\`, `\\.\`, `\??\`, `\x`: a share, a
		// device, the object manager, or the current drive's root.
		return "", false, newErr(ErrOutsideScope)
	case len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]):
		if len(p) == 2 || !isWinSep(p[2]) {
			// `C:x` is relative to C:'s current directory, a process's
			// state no agent sees.
			return "", false, newErr(ErrOutsideScope)
		}
		return windowsClean(strings.ToUpper(p[:1])+`:\`, p[3:])
	}
	return windowsClean("", p)
}

// windowsClean cleans rest, the part of a path after its volume (vol,
// `C:\`) or, when vol is "", a path relative to the root: components
// split at '/' and '\', empty and "." ones dropped, ".." taking the
// previous one off (above a volume's root it stays there, as Windows
// keeps it; above the project's root it is ErrTraversal). The result is
// vol and the names '\'-joined, or the relative names '/'-joined.
func windowsClean(vol, rest string) (string, bool, error) {
	var names []string
	for len(rest) > 0 {
		name := rest
		if i := strings.IndexAny(rest, `/\`); i >= 0 {
			name, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		switch name {
		case "", ".":
			continue
		case "..":
			switch {
			case len(names) > 0:
				names = names[:len(names)-1]
			case vol == "":
				return "", false, newErr(ErrTraversal)
			}
			continue
		}
		if err := windowsName(name); err != nil {
			return "", false, err
		}
		names = append(names, name)
	}
	if vol != "" {
		return vol + strings.Join(names, `\`), true, nil
	}
	if len(names) == 0 {
		return ".", false, nil
	}
	return strings.Join(names, "/"), false, nil
}

// windowsName judges one path component (not "", "." or "..") as NTFS
// and the Win32 layer above it take names, and refuses every name that
// would not mean the file it spells:
//
//   - longer than MaxNameBytes: ErrPathTooLong;
//   - a control character or one of <>"|?* (NTFS cannot hold them; '?'
//     and '*' are wildcards to some calls): ErrInvalidName;
//   - ':', which opens an alternate data stream (`a.txt:evil`,
//     `a::$DATA`): ErrReservedName;
//   - a trailing dot or space, which Win32 drops (`secret.` opens
//     `secret`, and `...` is no name at all): ErrReservedName;
//   - a device name (see isDevice): ErrReservedName;
//   - the shape of an 8.3 short name (`SECRET~1.TXT`), which may be the
//     alias of any long name: ErrReservedName. Whether such a name is
//     really an alias depends on the directory; judging the string alone
//     refuses a file whose long name has that shape as well.
func windowsName(name string) error { return winName(name, true) }

// hostName judges a name the walk takes from a symlink's target, which
// no agent wrote and the agent rules never saw: on Windows one Win32
// would take for another file or a device is refused as windowsName
// refuses it, save for the short-name shape (an alias NTFS resolves is
// caught on the opened handle; see portable.Open). Unix takes every name
// as it is.
func (r rules) hostName(name string) error {
	if !r.windows {
		return nil
	}
	return winName(name, false)
}

// winName is windowsName, judging the short-name shape when short.
func winName(name string, short bool) error {
	if len(name) > MaxNameBytes {
		return newErr(ErrPathTooLong)
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c < 0x20 || c == 0x7f || strings.IndexByte(`<>"|?*`, c) >= 0:
			return newErr(ErrInvalidName)
		case c == ':':
			return newErr(ErrReservedName)
		}
	}
	if onlyTrailing(rune(name[len(name)-1])) || isDevice(name) {
		return newErr(ErrReservedName)
	}
	var buf [64]rune
	if _, ok := parseShort(reduce(name, buf[:0])); ok && short {
		return newErr(ErrReservedName)
	}
	return nil
}

// isDevice reports whether Win32 takes the name for a device rather
// than a file, in any directory: CON, PRN, AUX, NUL, COM0-9 and LPT0-9
// (with the superscript digits ¹²³ too), CONIN$, CONOUT$ and CLOCK$, in
// any case, followed by any extension, with spaces before the extension
// or the end ("nul.txt", "Con .md", "COM¹.log").
func isDevice(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	base = strings.TrimRight(base, " ")
	var buf [8]rune
	f := buf[:0]
	for _, r := range base {
		if len(f) == len(buf) {
			return false
		}
		f = append(f, fold(r))
	}
	for _, d := range []string{"con", "prn", "aux", "nul", "conin$", "conout$", "clock$"} {
		if equalRunes(f, d) {
			return true
		}
	}
	if len(f) != 4 || !(equalRunes(f[:3], "com") || equalRunes(f[:3], "lpt")) {
		return false
	}
	d := f[3]
	return d >= '0' && d <= '9' || d == '¹' || d == '²' || d == '³'
}

// virtualRest is what follows the virtual root in p, "/project" or
// `\project` followed by a separator or nothing.
func virtualRest(p string) (string, bool) {
	n := len(VirtualRoot)
	if len(p) < n || !isWinSep(p[0]) || p[1:n] != VirtualRoot[1:] || len(p) > n && !isWinSep(p[n]) {
		return "", false
	}
	return p[n:], true
}

func isWinSep(c byte) bool { return c == '/' || c == '\\' }

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// within reports whether the host path p (absolute, clean) is root or
// lies under it, comparing the strings only. On Windows ASCII letters
// compare without case, as NTFS compares them by default, and every
// other byte exactly: a comparison that takes fewer paths for equal than
// the file system does can only refuse a path, never admit one. Where a
// directory is case-sensitive it admits a sibling spelled like the root
// in another case; Scope.Open's check on the opened handle refuses that.
func (r rules) within(root, p string) bool {
	return contains(root, p, r.sep(), r.windows)
}

// contains is within for a separator and a case rule.
func contains(root, p string, sep byte, asciiFold bool) bool {
	if len(p) < len(root) || !equalPrefix(p[:len(root)], root, asciiFold) {
		return false
	}
	return len(p) == len(root) || root[len(root)-1] == sep || p[len(root)] == sep
}

func equalPrefix(a, b string, asciiFold bool) bool {
	if !asciiFold {
		return a == b
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// rel is p (within root) relative to root, '/'-separated, "." for the
// root itself.
func (r rules) rel(root, p string) string {
	rest := strings.TrimLeft(p[len(root):], string(r.sep()))
	if rest == "" {
		return "."
	}
	if r.windows {
		rest = strings.ReplaceAll(rest, `\`, "/")
	}
	return rest
}

// virtual is p (within root) as the agent sees it: "/project/...".
func (r rules) virtual(root, p string) string {
	rel := r.rel(root, p)
	if rel == "." {
		return VirtualRoot
	}
	return VirtualRoot + "/" + rel
}

// linkTarget reads a symlink's target for the walk: dir is the host path
// of the directory holding the link. It returns the target in host
// spelling, whether it is absolute (the walk then starts over from it),
// and ok false for a target the walk will not follow (the caller refuses
// it as an escape).
//
// On Windows '/' in a target is taken for a separator; the NT and
// extended forms of a drive path (`\??\C:\x`, `\\?\C:\x`, what a
// junction or an absolute link may hold) become `C:\x`; a target rooted
// without a drive (`\x`) is on the link's own volume; a drive-relative
// one (`C:x`) names a process's current directory and is not followed.
func (r rules) linkTarget(dir, target string) (string, bool, bool) {
	if !r.windows {
		return target, strings.HasPrefix(target, "/"), true
	}
	t := strings.ReplaceAll(target, "/", `\`)
	if strings.HasPrefix(t, `\??\`) || strings.HasPrefix(t, `\\?\`) {
		if rest := t[4:]; isDrive(rest) {
			t = rest
		}
	}
	switch {
	case len(t) >= 2 && t[1] == ':' && isASCIILetter(t[0]):
		if !isDrive(t) {
			return "", false, false
		}
		return t, true, true
	case strings.HasPrefix(t, `\\`), strings.HasPrefix(t, `\??\`):
		// A share or a device: outside the project unless its root is
		// there, which the walk judges by the path it reaches.
		return t, true, true
	case strings.HasPrefix(t, `\`):
		return winVolume(dir) + t, true, true
	}
	return t, false, true
}

// isDrive reports whether p begins with a drive's root, `C:\`.
func isDrive(p string) bool {
	return len(p) >= 3 && isASCIILetter(p[0]) && p[1] == ':' && p[2] == '\\'
}

// winVolume is the volume of a Windows host path: "C:" for a drive path,
// `\\server\share` for a share, "" for anything else.
func winVolume(p string) string {
	if len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]) {
		return p[:2]
	}
	if !strings.HasPrefix(p, `\\`) {
		return ""
	}
	server := strings.IndexByte(p[2:], '\\')
	if server < 0 {
		return p
	}
	share := strings.IndexByte(p[2+server+1:], '\\')
	if share < 0 {
		return p
	}
	return p[:2+server+1+share]
}

// ntName judges one component of a host path the Windows resolver opens
// by itself, relative to its directory's handle: NTFS takes such a name
// as it is, save for ':' (a stream) and the characters it cannot hold.
// A realpath has no empty, "." or ".." component either.
func ntName(name string) error {
	switch name {
	case "", ".", "..":
		return newErr(ErrInvalidPath)
	}
	if len(name) > MaxNameBytes {
		return newErr(ErrPathTooLong)
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == ':':
			return newErr(ErrReservedName)
		case c < 0x20 || c == '/' || strings.IndexByte(`<>"|?*`, c) >= 0:
			return newErr(ErrInvalidName)
		}
	}
	return nil
}
