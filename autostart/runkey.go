package autostart

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
)

// RunKeyPath is the registry key, under HKEY_CURRENT_USER, whose values
// Windows runs at each logon of the user.
const RunKeyPath = `Software\Microsoft\Windows\CurrentVersion\Run`

// maxRunCommand is the longest command line a Run value may hold, in
// UTF-16 units ("a command line no longer than 260 characters", Run and
// RunOnce Registry Keys).
const maxRunCommand = 260

// renderRunKey is argv as the Run value's command line (stored as REG_SZ,
// so a % is never expanded): the program in double quotes, as
// CreateProcess reads the first token (without them, a path with spaces
// would run C:\Program.exe if one existed), then each argument quoted for
// CommandLineToArgvW, which Go's os.Args follows too (quoteArg).
func renderRunKey(argv []string) (string, error) {
	for _, a := range argv {
		if err := checkText(a); err != nil {
			return "", fmt.Errorf("a Run value cannot run it: %w", err)
		}
	}
	exe := argv[0]
	if !windowsAbs(exe) {
		return "", fmt.Errorf("a Run value needs an absolute program path, got %q", exe)
	}
	if strings.Contains(exe, `"`) {
		return "", fmt.Errorf("a Run value cannot run %q: a program path cannot hold a double quote", exe)
	}
	var b strings.Builder
	b.WriteString(`"` + exe + `"`)
	for _, a := range argv[1:] {
		b.WriteByte(' ')
		b.WriteString(quoteArg(a))
	}
	s := b.String()
	if n := len(utf16.Encode([]rune(s))); n > maxRunCommand {
		return "", fmt.Errorf("the Run command line would be %d characters, and Windows runs at most %d: install hub in a shorter path", n, maxRunCommand)
	}
	return s, nil
}

// windowsAbs reports whether p is an absolute Windows path: a drive's
// (C:\…) or a share's (\\server\share\…).
func windowsAbs(p string) bool {
	if len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') {
		c := p[0] | 0x20
		return 'a' <= c && c <= 'z'
	}
	return strings.HasPrefix(p, `\\`)
}

// quoteArg quotes one argument for CommandLineToArgvW: as it is unless
// empty or holding a space, tab or double quote; else in double quotes,
// with a double quote written \" and the backslashes before it, or before
// the closing quote, doubled (backslashes anywhere else are literal).
func quoteArg(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\"") {
		return a
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for i := 0; i < len(a); i++ {
		switch c := a[i]; c {
		case '\\':
			slashes++
			b.WriteByte(c)
		case '"':
			b.WriteString(strings.Repeat(`\`, slashes+1))
			b.WriteByte(c)
			slashes = 0
		default:
			slashes = 0
			b.WriteByte(c)
		}
	}
	b.WriteString(strings.Repeat(`\`, slashes))
	b.WriteByte('"')
	return b.String()
}

// parseRunKey splits a Run command line the way Windows runs it: the
// program as CreateProcess reads it (up to the closing quote when quoted,
// else to the first blank), the rest by CommandLineToArgvW's rules
// (splitArgs).
func parseRunKey(s string) ([]string, error) {
	s = strings.TrimLeft(s, " \t")
	var exe, rest string
	if strings.HasPrefix(s, `"`) {
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return nil, errors.New("the command line's program has no closing quote")
		}
		exe, rest = s[1:1+end], s[2+end:]
	} else {
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			i = len(s)
		}
		exe, rest = s[:i], s[i:]
	}
	if exe == "" {
		return nil, errors.New("the command line names no program")
	}
	return append([]string{exe}, splitArgs(rest)...), nil
}

// splitArgs splits arguments by CommandLineToArgvW's rules: blanks
// separate them outside double quotes; 2n backslashes before a " are n
// backslashes and the quote opens or closes; 2n+1 are n and a literal ";
// other backslashes are literal; "" inside quotes is a literal ".
func splitArgs(s string) []string {
	var args []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return args
		}
		var b strings.Builder
		quoted := false
		slashes := 0
		i := 0
	arg:
		for ; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '\\':
				slashes++
				continue
			case c == '"':
				b.WriteString(strings.Repeat(`\`, slashes/2))
				if slashes%2 == 1 {
					b.WriteByte('"')
				} else if quoted && i+1 < len(s) && s[i+1] == '"' {
					b.WriteByte('"')
					i++
					quoted = false
				} else {
					quoted = !quoted
				}
				slashes = 0
				continue
			case (c == ' ' || c == '\t') && !quoted:
				break arg
			}
			b.WriteString(strings.Repeat(`\`, slashes))
			slashes = 0
			b.WriteByte(c)
		}
		b.WriteString(strings.Repeat(`\`, slashes))
		args = append(args, b.String())
		s = s[i:]
	}
}
