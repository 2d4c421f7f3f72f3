package autostart

import (
	"slices"
	"strings"
	"testing"
)

// argvOf splits fuzz input into an argument list (NUL separates).
func argvOf(s string) []string { return strings.Split(s, "\x00") }

// FuzzDesktop: parsing any bytes as a .desktop file never panics, and
// every argv renderDesktop accepts reads back unchanged.
func FuzzDesktop(f *testing.F) {
	f.Add("/opt/hub\x00run\x00--detached")
	f.Add("/a b/it's \"x\"\x00--config\x00/c/100% $x `y`.yaml")
	f.Add("[Desktop Entry]\nExec=\"/a\\\\\\\\b\" %U\nHidden=true\n")
	f.Add("/opt/hub\x00no-break-space\u00a0") // Unicode space: not a separator
	f.Fuzz(func(t *testing.T, s string) {
		parseDesktop([]byte(s))
		argv := argvOf(s)
		argv[0] = "/" + argv[0]
		out, err := renderDesktop(argv)
		if err != nil {
			return
		}
		d, err := parseDesktop(out)
		if err != nil || !slices.Equal(d.argv, argv) || d.off != "" {
			t.Fatalf("%q rendered\n%s\nread back %q, %v", argv, out, d.argv, err)
		}
	})
}

// FuzzPlist: parsing any bytes as a plist never panics, and every argv
// renderPlist accepts reads back unchanged.
func FuzzPlist(f *testing.F) {
	f.Add("/opt/hub\x00run\x00--detached")
	f.Add("/R&D <x>/hub\x00]]>\x00&amp;")
	f.Add(`<plist><dict><key>ProgramArguments</key><array><string>/a</string></array></dict></plist>`)
	f.Fuzz(func(t *testing.T, s string) {
		parsePlist([]byte(s))
		argv := argvOf(s)
		argv[0] = "/" + argv[0]
		out, err := renderPlist(Label, argv, nil)
		if err != nil {
			return
		}
		got, err := parsePlist(out)
		if err != nil || !slices.Equal(got, argv) {
			t.Fatalf("%q rendered\n%s\nread back %q, %v", argv, out, got, err)
		}
	})
}

// FuzzRunKey: parsing any string as a Run command line never panics, and
// every argv renderRunKey accepts reads back unchanged.
func FuzzRunKey(f *testing.F) {
	f.Add(`hub.exe` + "\x00start")
	f.Add(`a b\` + "\x00--config\x00" + `C:\a "b"\\`)
	f.Add(`"C:\Program Files\hub.exe" start "a\\\"b" ""`)
	f.Fuzz(func(t *testing.T, s string) {
		parseRunKey(s)
		argv := argvOf(s)
		argv[0] = `C:\` + argv[0]
		out, err := renderRunKey(argv)
		if err != nil {
			return
		}
		got, err := parseRunKey(out)
		if err != nil || !slices.Equal(got, argv) {
			t.Fatalf("%q rendered %s, read back %q, %v", argv, out, got, err)
		}
	})
}
