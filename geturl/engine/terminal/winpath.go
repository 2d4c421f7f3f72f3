package terminal

import "strings"

// Windows paths for the cmd.exe guard (guardcmd.go). Portable string code:
// it judges words of a command line, never touches the file system, and
// runs in the Linux tests.

// winVars are the environment variables the guard can judge: the
// machine's well-known folders, with the user's home as C:\Users\~. Any
// other variable is taken as possibly empty, like an unknown one in sh.
var winVars = map[string]string{
	"SYSTEMDRIVE":            `C:`,
	"HOMEDRIVE":              `C:`,
	"SYSTEMROOT":             `C:\Windows`,
	"WINDIR":                 `C:\Windows`,
	"USERPROFILE":            `C:\Users\~`,
	"HOMEPATH":               `\Users\~`,
	"HOME":                   `C:\Users\~`,
	"PUBLIC":                 `C:\Users\Public`,
	"PROGRAMFILES":           `C:\Program Files`,
	"PROGRAMFILES(X86)":      `C:\Program Files (x86)`,
	"PROGRAMW6432":           `C:\Program Files`,
	"COMMONPROGRAMFILES":     `C:\Program Files\Common Files`,
	"PROGRAMDATA":            `C:\ProgramData`,
	"ALLUSERSPROFILE":        `C:\ProgramData`,
	"APPDATA":                `C:\Users\~\AppData\Roaming`,
	"LOCALAPPDATA":           `C:\Users\~\AppData\Local`,
	"TEMP":                   `C:\Users\~\AppData\Local\Temp`,
	"TMP":                    `C:\Users\~\AppData\Local\Temp`,
	"CD":                     `.`,
	"ONEDRIVE":               `C:\Users\~\OneDrive`,
	"USERNAME":               `~`,
	"COMPUTERNAME":           `host`,
	"PROCESSOR_ARCHITECTURE": `AMD64`,
}

// winExpand replaces %NAME% with what winVars knows, an unknown variable
// or a substring/substitution (%X:~0,1%, %X:a=b%) with nothing, reporting
// unknown. A lone % stays.
func winExpand(w string) (p string, unknown bool) {
	var b strings.Builder
	for i := 0; i < len(w); {
		if w[i] != '%' {
			b.WriteByte(w[i])
			i++
			continue
		}
		end := strings.IndexByte(w[i+1:], '%')
		if end < 0 {
			b.WriteString(w[i:])
			break
		}
		name := w[i+1 : i+1+end]
		i += end + 2
		if v, ok := winVars[strings.ToUpper(name)]; ok {
			b.WriteString(v)
			continue
		}
		unknown = true
	}
	return b.String(), unknown
}

// winPath is a Windows path split for judging: its volume ("C:", or
// "\\server\share" upper-cased; "" for the current drive's root or a
// relative path), whether it is rooted, and its cleaned components.
type winPath struct {
	volume string
	rooted bool
	parts  []string
}

// parseWinPath splits p (either separator) and resolves "." and "..",
// which never climb above the root. A "\\?\" or "\\.\" prefix is dropped.
func parseWinPath(p string) winPath {
	p = strings.ReplaceAll(p, "/", `\`)
	for _, pre := range []string{`\\?\`, `\\.\`, `\??\`} {
		if rest, ok := strings.CutPrefix(p, pre); ok {
			p = rest
			if r, ok := cutFold(p, `UNC\`); ok {
				p = `\\` + r
			}
		}
	}
	var w winPath
	switch {
	case strings.HasPrefix(p, `\\`):
		f := strings.SplitN(p[2:], `\`, 3)
		w.volume = `\\` + strings.ToUpper(f[0])
		if len(f) > 1 {
			w.volume += `\` + strings.ToUpper(f[1])
		}
		w.rooted = true
		p = ""
		if len(f) > 2 {
			p = f[2]
		}
	case len(p) >= 2 && p[1] == ':' && isLetter(p[0]):
		w.volume = strings.ToUpper(p[:1]) + ":"
		p = p[2:]
		w.rooted = strings.HasPrefix(p, `\`)
	default:
		w.rooted = strings.HasPrefix(p, `\`)
	}
	// cmd and Win32 drop a component's trailing dots and spaces; ".."
	// climbs one, never above the root.
	for _, c := range strings.Split(p, `\`) {
		switch strings.TrimRight(c, " ") {
		case "", ".":
			continue
		case "..":
			if len(w.parts) > 0 {
				w.parts = w.parts[:len(w.parts)-1]
			}
			continue
		}
		if t := strings.TrimRight(c, ". "); t != "" {
			w.parts = append(w.parts, t)
		}
	}
	return w
}

func (w winPath) String() string {
	s := w.volume
	if w.rooted {
		s += `\`
	}
	return s + strings.Join(w.parts, `\`)
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// cutFold is strings.CutPrefix ignoring ASCII case.
func cutFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// driveOf is the upper-case drive ("C:") of a host path, or "".
func driveOf(p string) string {
	if len(p) >= 2 && p[1] == ':' && isLetter(p[0]) {
		return strings.ToUpper(p[:2])
	}
	return ""
}

// winAbsolute reports whether a word names a path that does not depend on
// the current directory of the start drive: rooted (\…, C:\…, \\server),
// on another drive, or starting with a variable, which winRootish expands.
func winAbsolute(w string) bool {
	return strings.HasPrefix(w, `\`) || strings.HasPrefix(w, "/") || strings.HasPrefix(w, "%") ||
		(len(w) >= 2 && w[1] == ':' && isLetter(w[0]))
}

// winResolve joins a relative word to where a cd the guard followed went
// (dir), or, in the starting directory, only a word that climbs out of it
// to start. It returns "" for a word that names the project.
func winResolve(w, dir, start string) string {
	if winAbsolute(w) {
		// "D:x" is relative to D:'s current directory: the root in a
		// fresh cmd, unless D: is the drive the command starts on.
		if len(w) >= 2 && w[1] == ':' && (len(w) == 2 || (w[2] != '\\' && w[2] != '/')) {
			d := strings.ToUpper(w[:2])
			switch {
			case dir != "" && driveOf(dir) == d:
				return dir + `\` + w[2:]
			case dir == "" && driveOf(start) == d:
				return winResolve(w[2:], dir, start)
			}
			return d + `\` + w[2:]
		}
		return w
	}
	switch {
	case dir != "":
		return dir + `\` + w
	case winClimbs(w) && start != "":
		return start + `\` + w
	}
	return ""
}

func winClimbs(w string) bool {
	w = strings.ReplaceAll(w, "/", `\`)
	return w == ".." || strings.HasPrefix(w, `..\`)
}

// winRootish reports whether a path word of a cmd.exe command names a
// drive's root, a top-level directory other than \Temp and \tmp, a home
// directory (\Users\NAME), C:\Windows or one level inside it, or the root
// of a network share, once expanded (winExpand) and resolved (winResolve).
// A path that becomes one of those only when an unknown variable is empty
// counts only when it is a root ("%OUT%\" may be "\").
func winRootish(word, dir, start string) bool {
	e, unknown := winExpand(word)
	if e == "" {
		return false
	}
	r := winResolve(e, dir, start)
	if r == "" {
		return false
	}
	w := parseWinPath(r)
	if !w.rooted {
		return false
	}
	parts := w.parts
	for len(parts) > 0 && globOnly(parts[len(parts)-1]) {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		return true
	}
	if unknown || strings.HasPrefix(w.volume, `\\`) {
		return false
	}
	first := strings.ToLower(parts[0])
	switch len(parts) {
	case 1:
		return first != "temp" && first != "tmp"
	case 2:
		return first == "users" || first == "documents and settings" || first == "windows"
	}
	return false
}

// winDevice reports whether a word names a raw disk or volume: \\.\PhysicalDriveN,
// \\.\C:, \\?\Volume{…}, \\.\Harddisk…, \Device\Harddisk….
func winDevice(word string) bool {
	w := strings.ReplaceAll(word, "/", `\`)
	rest, ok := cutFold(w, `\\.\`)
	if !ok {
		if rest, ok = cutFold(w, `\\?\`); !ok {
			if rest, ok = cutFold(w, `\??\`); !ok {
				rest, ok = cutFold(w, `\Device\`)
				if !ok {
					return false
				}
			}
		}
	}
	rest = strings.TrimRight(rest, `\`)
	for _, pre := range []string{"physicaldrive", "harddisk", "volume{", "cdrom", "tape"} {
		if _, ok := cutFold(rest, pre); ok {
			return true
		}
	}
	return len(rest) == 2 && rest[1] == ':' && isLetter(rest[0])
}
