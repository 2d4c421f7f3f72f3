package autostart

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// renderDesktop is the XDG autostart entry: a Desktop Entry of Type
// Application whose Exec is argv, quoted by the Desktop Entry spec's rules
// (execLine).
func renderDesktop(argv []string) ([]byte, error) {
	if !strings.HasPrefix(argv[0], "/") {
		return nil, fmt.Errorf("an autostart entry needs an absolute program path, got %q", argv[0])
	}
	for i, a := range argv {
		if err := checkText(a); err != nil {
			return nil, fmt.Errorf("an autostart entry cannot run it: %w", err)
		}
		// Launchers disagree here, so no quoting is right for all of
		// them: GLib unquotes an argument once, systemd's autostart
		// generator unquotes it and then reads C escapes in it (a
		// backslash); the generator looks up the program before
		// turning %% into % (a percent sign in its path).
		if strings.Contains(a, `\`) {
			return nil, fmt.Errorf("an autostart entry cannot carry %q: desktop launchers read its backslash differently", a)
		}
		if i == 0 && strings.Contains(a, "%") {
			return nil, fmt.Errorf("an autostart entry cannot run %q: desktop launchers read a %% in the program's path differently", a)
		}
	}
	var b bytes.Buffer
	b.WriteString("[Desktop Entry]\n")
	b.WriteString("Type=Application\n")
	b.WriteString("Name=hub\n")
	b.WriteString("Comment=Runs the hub's loopback bridges from login (hub autostart disable removes this)\n")
	b.WriteString("Exec=" + execLine(argv) + "\n")
	b.WriteString("Terminal=false\n")
	return b.Bytes(), nil
}

// execReserved are the characters that make the Desktop Entry spec quote
// an Exec argument.
const execReserved = " \t\n\"'\\><~|&;$*?#()`"

// execLine is argv as an Exec value: each argument with a reserved
// character (or empty) in double quotes, with ", `, $ and \ escaped by a
// backslash inside them; every % doubled (field codes); then the value
// itself escaped as a string value (a backslash doubled, so a literal one
// in a quoted argument is four).
func execLine(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		a = strings.ReplaceAll(a, "%", "%%")
		if a != "" && !strings.ContainsAny(a, execReserved) {
			b.WriteString(a)
			continue
		}
		b.WriteByte('"')
		for _, r := range a {
			if strings.ContainsRune("\"`$\\", r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	return escapeValue(b.String())
}

// escapeValue escapes s as a Desktop Entry string value.
func escapeValue(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`, "\r", `\r`)
	s = r.Replace(s)
	if strings.HasPrefix(s, " ") {
		s = `\s` + s[1:]
	}
	return s
}

// unescapeValue reverses escapeValue (\s \n \t \r \\; any other escape is
// an error).
func unescapeValue(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i == len(s) {
			return "", errors.New("the value ends in a lone backslash")
		}
		switch s[i] {
		case 's':
			b.WriteByte(' ')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		default:
			return "", fmt.Errorf("undefined escape \\%c", s[i])
		}
	}
	return b.String(), nil
}

// fieldCodes are the Exec field codes; an argument that is one of them
// alone expands to nothing here (no files, no URLs).
var fieldCodes = []string{"%f", "%F", "%u", "%U", "%d", "%D", "%n", "%N", "%i", "%c", "%k", "%v", "%m"}

// splitExec reads an Exec value (already unescaped as a string value)
// into its arguments: the reverse of execLine.
func splitExec(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\\':
			i++
			if i == len(s) {
				return nil, errors.New("Exec ends inside a quoted argument")
			}
			if !strings.ContainsRune("\"`$\\", rune(s[i])) {
				return nil, fmt.Errorf("Exec escapes %q inside quotes, which the spec leaves undefined", s[i])
			}
			cur.WriteByte(s[i])
		case quoted && c == '"':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '"':
			quoted, inArg = true, true
		case c == ' ' || c == '\t' || c == '\n':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if quoted {
		return nil, errors.New("Exec has an unterminated quote")
	}
	if inArg {
		args = append(args, cur.String())
	}
	out := args[:0]
	for _, a := range args {
		if len(out) > 0 && slices.Contains(fieldCodes, a) {
			continue
		}
		out = append(out, strings.ReplaceAll(a, "%%", "%"))
	}
	return out, nil
}

// desktopEntry is what status reads from an autostart .desktop file.
type desktopEntry struct {
	argv []string
	off  string // the key that turns the entry off, "" when none does
}

// parseDesktop reads the [Desktop Entry] group's Exec, Hidden and
// X-GNOME-Autostart-enabled keys (the desktop's "startup applications"
// settings turn an entry off with either). data is bounded by the store
// (maxEntry).
func parseDesktop(data []byte) (desktopEntry, error) {
	var d desktopEntry
	var exec string
	haveExec := false
	group := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxEntry)
	for sc.Scan() {
		// Blanks are ASCII here, as for GLib and systemd: a Unicode
		// space can end an unquoted argument.
		line := strings.Trim(sc.Text(), " \t")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			group = line[1 : len(line)-1]
			continue
		}
		if group != "Desktop Entry" {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key, value = strings.Trim(key, " \t"), strings.Trim(value, " \t")
		switch key {
		case "Exec":
			if !haveExec {
				exec, haveExec = value, true
			}
		case "Hidden":
			if value == "true" {
				d.off = "Hidden=true"
			}
		case "X-GNOME-Autostart-enabled":
			if value == "false" && d.off == "" {
				d.off = "X-GNOME-Autostart-enabled=false"
			}
		}
	}
	if err := sc.Err(); err != nil {
		return d, err
	}
	if !haveExec {
		return d, errors.New("the entry has no Exec line")
	}
	v, err := unescapeValue(exec)
	if err != nil {
		return d, fmt.Errorf("Exec: %w", err)
	}
	if d.argv, err = splitExec(v); err != nil {
		return d, err
	}
	return d, nil
}
