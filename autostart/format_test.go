package autostart

import (
	"encoding/xml"
	"slices"
	"strings"
	"testing"
)

// paths are the awkward file names every format is tried with: spaces,
// both quotes, XML and shell metacharacters, a percent sign, non-ASCII.
var paths = []string{
	"/opt/hub/hub",
	"/Users/José Müller/bin/hub",
	`/home/me/it's "mine"/hub`,
	"/home/me/R&D <tools>/hub",
	"/home/me/$HOME`id`;|*?#()~/hub",
	"/home/me/日本語 🚀/hub",
	"/home/me/a=b,c/hub",
}

func TestPlistQuoting(t *testing.T) {
	cases := []struct {
		arg  string
		want string // the <string> element
	}{
		{"/opt/hub/hub", "<string>/opt/hub/hub</string>"},
		{"/Users/José Müller/bin/hub", "<string>/Users/José Müller/bin/hub</string>"},
		{`/a/it's "mine"/hub`, `<string>/a/it's "mine"/hub</string>`},
		{"/a/R&D <tools>/hub", "<string>/a/R&amp;D &lt;tools&gt;/hub</string>"},
		{"/a/100% ]]> done/hub", "<string>/a/100% ]]&gt; done/hub</string>"},
		{"/a/&amp;/hub", "<string>/a/&amp;amp;/hub</string>"},
	}
	for _, tc := range cases {
		argv := []string{tc.arg, "run", "--detached", "--config", tc.arg + ".yaml"}
		out, err := renderPlist(Label, argv, nil)
		if err != nil {
			t.Fatalf("%q: %v", tc.arg, err)
		}
		if !strings.Contains(string(out), "\t\t"+tc.want+"\n") {
			t.Errorf("%q: want %s in\n%s", tc.arg, tc.want, out)
		}
		got, err := parsePlist(out)
		if err != nil || !slices.Equal(got, argv) {
			t.Errorf("%q: read back %q, %v", tc.arg, got, err)
		}
		// Well-formed XML, whatever the path.
		d := xml.NewDecoder(strings.NewReader(string(out)))
		for {
			if _, err := d.Token(); err != nil {
				if err.Error() != "EOF" {
					t.Errorf("%q: not well-formed: %v", tc.arg, err)
				}
				break
			}
		}
	}
}

func TestPlistDocument(t *testing.T) {
	out, err := renderPlist(Label, []string{"/opt/hub/hub", "run", "--detached"}, []string{"PATH=/usr/bin:/bin", "XDG_STATE_HOME=/Users/me/state & more"})
	if err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>com.github.hubdev.hub</string>
	<key>ProgramArguments</key>
	<array>
		<string>/opt/hub/hub</string>
		<string>run</string>
		<string>--detached</string>
	</array>
	<key>EnvironmentVariables</key>
	<dict>
		<key>PATH</key>
		<string>/usr/bin:/bin</string>
		<key>XDG_STATE_HOME</key>
		<string>/Users/me/state &amp; more</string>
	</dict>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<false/>
</dict>
</plist>
`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// TestPlistRefuses: what a plist cannot carry unchanged is an error, not
// a silently different path.
func TestPlistRefuses(t *testing.T) {
	for _, argv := range [][]string{
		{"hub", "run"},                   // relative
		{"/a/b\x01c/hub", "run"},         // control character (XML 1.0 has none)
		{"/a/b\nc/hub", "run"},           // a line end in a name
		{"/a/\xff\xfe/hub", "run"},       // not UTF-8
		{"/opt/hub", "--config", "\x7f"}, // DEL
	} {
		if out, err := renderPlist(Label, argv, nil); err == nil {
			t.Errorf("%q: rendered\n%s", argv, out)
		}
	}
	if _, err := renderPlist(Label, []string{"/opt/hub"}, []string{"NOEQUALS"}); err == nil {
		t.Error("env entry without = rendered")
	}
}

// TestParsePlist reads plists hub did not write: another key order,
// comments, Program beside ProgramArguments, nested dicts, none at all.
func TestParsePlist(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
		err      string
	}{
		{"reordered with comments", `<?xml version="1.0"?><plist version="1.0"><!-- hi --><dict>
			<key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>
			<key>ProgramArguments</key><array><string>/usr/local/bin/hub</string><string>a &amp; b</string></array>
			<key>Label</key><string>x</string></dict></plist>`, []string{"/usr/local/bin/hub", "a & b"}, ""},
		{"Program wins", `<plist><dict><key>Program</key><string>/bin/real</string>
			<key>ProgramArguments</key><array><string>argv0</string><string>x</string></array></dict></plist>`,
			[]string{"/bin/real", "x"}, ""},
		{"Program alone", `<plist><dict><key>Program</key><string>/bin/real</string></dict></plist>`, []string{"/bin/real"}, ""},
		{"no program", `<plist><dict><key>Label</key><string>x</string></dict></plist>`, nil, "names no program"},
		{"not a plist", `<html></html>`, nil, "<html> where <plist>"},
		{"binary plist", "bplist00\x00\x01", nil, "not XML"},
		{"bad XML", `<plist><dict><key>ProgramArguments</key><array><string>/a</array></dict></plist>`, nil, "not XML"},
		{"non-string argument", `<plist><dict><key>ProgramArguments</key><array><integer>1</integer></array></dict></plist>`, nil, "<integer>"},
	}
	for _, tc := range cases {
		got, err := parsePlist([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %q, %v; want error %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// TestDesktopExecQuoting follows the Desktop Entry spec's Exec rules: an
// argument with a reserved character is double-quoted with ", `, $ and \
// escaped; % is doubled everywhere; then the value's own escaping doubles
// each backslash (so a literal one in a quoted argument is four).
func TestDesktopExecQuoting(t *testing.T) {
	cases := []struct {
		argv []string
		want string
	}{
		{[]string{"/opt/hub/hub", "run", "--detached"}, `/opt/hub/hub run --detached`},
		{[]string{"/Users/José Müller/bin/hub", "run"}, `"/Users/José Müller/bin/hub" run`},
		{[]string{"/opt/hub", "--config", `/a/it's "mine".yaml`}, `/opt/hub --config "/a/it's \\"mine\\".yaml"`},
		{[]string{"/opt/hub", "--config", "/a/$HOME`id`.yaml"}, "/opt/hub --config \"/a/\\\\$HOME\\\\`id\\\\`.yaml\""},
		{[]string{"/opt/hub", "--config", "/a/100%.yaml"}, `/opt/hub --config /a/100%%.yaml`},
		{[]string{"/opt/hub", "--config", "/a/100% sure.yaml"}, `/opt/hub --config "/a/100%% sure.yaml"`},
		{[]string{"/opt/hub", "--config", "/a/%f.yaml"}, `/opt/hub --config /a/%%f.yaml`},
		{[]string{"/opt/hub", "--config", "/a/日本語 🚀.yaml"}, `/opt/hub --config "/a/日本語 🚀.yaml"`},
		{[]string{"/opt/hub", "--config", "/a/x=y;z.yaml"}, `/opt/hub --config "/a/x=y;z.yaml"`},
		{[]string{"/opt/hub", "--config", "/a/~me/(1)#2.yaml"}, `/opt/hub --config "/a/~me/(1)#2.yaml"`},
		{[]string{"/opt/hub", "--config", ""}, `/opt/hub --config ""`},
		{[]string{"/opt/hub", `a\b`}, `/opt/hub "a\\\\b"`},
	}
	for _, tc := range cases {
		got := execLine(tc.argv)
		if got != tc.want {
			t.Errorf("%q:\ngot  Exec=%s\nwant Exec=%s", tc.argv, got, tc.want)
		}
		v, err := unescapeValue(got)
		if err != nil {
			t.Fatalf("%q: %v", tc.argv, err)
		}
		if back, err := splitExec(v); err != nil || !slices.Equal(back, tc.argv) {
			t.Errorf("%q: read back %q, %v", tc.argv, back, err)
		}
	}
	// The escaped $ case, spelled out: inside quotes \$ and \`, then each
	// backslash doubled by the value escaping.
	if got := execLine([]string{"/opt/hub", "$x"}); got != `/opt/hub "\\$x"` {
		t.Errorf("$x: Exec=%s", got)
	}
}

// TestDesktopRefuses: a backslash anywhere and a % in the program's path
// are read differently by GLib and by systemd's autostart generator, so
// no Exec line is right for both; control characters and bytes that are
// not UTF-8 have no place in a .desktop file.
func TestDesktopRefuses(t *testing.T) {
	for _, argv := range [][]string{
		{"hub", "run"},
		{`/a\b/hub`, "run"},
		{"/opt/hub", "--config", `C:\x.yaml`},
		{"/a/100%/hub", "run"},
		{"/a/b\tc/hub", "run"},
		{"/opt/hub", "--config", "/a/\xff.yaml"},
	} {
		if out, err := renderDesktop(argv); err == nil {
			t.Errorf("%q: rendered\n%s", argv, out)
		}
	}
}

func TestDesktopDocument(t *testing.T) {
	out, err := renderDesktop([]string{"/home/me/go/bin/hub", "run", "--detached", "--config", "/home/me/my hub.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	want := `[Desktop Entry]
Type=Application
Name=hub
Comment=Runs the hub's loopback bridges from login (hub autostart disable removes this)
Exec=/home/me/go/bin/hub run --detached --config "/home/me/my hub.yaml"
Terminal=false
`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestParseDesktop(t *testing.T) {
	cases := []struct {
		name, in string
		argv     []string
		off, err string
	}{
		{"ours", "[Desktop Entry]\nType=Application\nExec=/opt/hub run --detached\n", []string{"/opt/hub", "run", "--detached"}, "", ""},
		{"spaces around =, comments, other groups", "# c\n[Desktop Entry]\nName[fr]=moyeu\nExec = \"/a b/hub\" run\n[Desktop Action x]\nExec=/other\n",
			[]string{"/a b/hub", "run"}, "", ""},
		{"turned off: Hidden", "[Desktop Entry]\nExec=/opt/hub run\nHidden=true\n", []string{"/opt/hub", "run"}, "Hidden=true", ""},
		{"turned off: GNOME", "[Desktop Entry]\nExec=/opt/hub run\nX-GNOME-Autostart-enabled=false\n", []string{"/opt/hub", "run"}, "X-GNOME-Autostart-enabled=false", ""},
		{"field codes dropped", "[Desktop Entry]\nExec=/opt/hub run %U %%x\n", []string{"/opt/hub", "run", "%x"}, "", ""},
		{"value escapes", `[Desktop Entry]` + "\nExec=\\s/opt/hub \"a\\\\\\\\b\"\n", []string{"/opt/hub", `a\b`}, "", ""},
		{"no Exec", "[Desktop Entry]\nType=Application\n", nil, "", "no Exec"},
		{"Exec only elsewhere", "[Other]\nExec=/x\n", nil, "", "no Exec"},
		{"unterminated quote", "[Desktop Entry]\nExec=\"/opt/hub run\n", nil, "", "unterminated"},
		{"bad value escape", "[Desktop Entry]\nExec=/opt/hub \\q\n", nil, "", "undefined escape"},
		{"bad quoted escape", "[Desktop Entry]\nExec=\"/opt/\\\\a\"\n", nil, "", "undefined"},
	}
	for _, tc := range cases {
		d, err := parseDesktop([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %q, %v; want error %q", tc.name, d.argv, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(d.argv, tc.argv) || d.off != tc.off {
			t.Errorf("%s: got %q off=%q, %v; want %q off=%q", tc.name, d.argv, d.off, err, tc.argv, tc.off)
		}
	}
}

// TestRunKeyQuoting follows how Windows reads a Run value: CreateProcess
// takes the quoted program up to its closing quote, the program's C
// runtime (and Go's os.Args) splits the rest by CommandLineToArgvW's
// backslash rules.
func TestRunKeyQuoting(t *testing.T) {
	cases := []struct {
		argv []string
		want string
	}{
		{[]string{`C:\hub\hub.exe`, "start"}, `"C:\hub\hub.exe" start`},
		{[]string{`C:\Program Files\hub\hub.exe`, "start"}, `"C:\Program Files\hub\hub.exe" start`},
		{[]string{`C:\Users\José\hub.exe`, "start", "--config", `C:\Users\José\my hub\hub.yaml`}, `"C:\Users\José\hub.exe" start --config "C:\Users\José\my hub\hub.yaml"`},
		{[]string{`C:\h.exe`, "start", "--config", `C:\a\b.yaml`}, `"C:\h.exe" start --config C:\a\b.yaml`},
		{[]string{`C:\h.exe`, "--config", `C:\%USERPROFILE%\100%.yaml`}, `"C:\h.exe" --config C:\%USERPROFILE%\100%.yaml`},
		{[]string{`C:\h.exe`, "--config", `C:\a "q".yaml`}, `"C:\h.exe" --config "C:\a \"q\".yaml"`},
		{[]string{`C:\h.exe`, "--config", `C:\a\"q".yaml`}, `"C:\h.exe" --config "C:\a\\\"q\".yaml"`},
		{[]string{`C:\h.exe`, "--config", `C:\dir with space\`}, `"C:\h.exe" --config "C:\dir with space\\"`},
		{[]string{`C:\h.exe`, "--config", `\\server\share\日本語 🚀.yaml`}, `"C:\h.exe" --config "\\server\share\日本語 🚀.yaml"`},
		{[]string{`\\server\share\hub.exe`, ""}, `"\\server\share\hub.exe" ""`},
	}
	for _, tc := range cases {
		got, err := renderRunKey(tc.argv)
		if err != nil {
			t.Fatalf("%q: %v", tc.argv, err)
		}
		if got != tc.want {
			t.Errorf("%q:\ngot  %s\nwant %s", tc.argv, got, tc.want)
		}
		if back, err := parseRunKey(got); err != nil || !slices.Equal(back, tc.argv) {
			t.Errorf("%q: read back %q, %v", tc.argv, back, err)
		}
	}
}

func TestRunKeyRefuses(t *testing.T) {
	long := `C:\` + strings.Repeat("d", 240) + `\hub.exe` // 251 characters
	for _, argv := range [][]string{
		{`hub.exe`, "start"},
		{`/opt/hub`, "start"},
		{`C:\a"b\hub.exe`, "start"},
		{`C:\a` + "\x01" + `\hub.exe`, "start"},
		{long, "start", "--config", `C:\x.yaml`}, // 251+2+1+5+1+8+1+9 > 260
	} {
		if out, err := renderRunKey(argv); err == nil {
			t.Errorf("%q: rendered %s", argv, out)
		}
	}
	// 260 UTF-16 units is the limit, not 260 bytes: "é" is one unit.
	exe := `C:\` + strings.Repeat("é", 260-len(`C:\`)-len(`.exe`)-2) + `.exe`
	if _, err := renderRunKey([]string{exe}); err != nil {
		t.Errorf("a 260-character command line: %v", err)
	}
	if _, err := renderRunKey([]string{exe[:len(exe)-4] + "x.exe"}); err == nil {
		t.Error("a 261-character command line rendered")
	}
}

func TestParseRunKey(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{`C:\hub\hub.exe start`, []string{`C:\hub\hub.exe`, "start"}},
		{`  "C:\Program Files\hub.exe"  start   --config  x`, []string{`C:\Program Files\hub.exe`, "start", "--config", "x"}},
		{`"C:\a\hub.exe"start`, []string{`C:\a\hub.exe`, "start"}},
		{`"C:\h.exe" a\\\\"b c"`, []string{`C:\h.exe`, `a\\b c`}},
		{`"C:\h.exe" "a""b"`, []string{`C:\h.exe`, `a"b`}},
		{`"C:\h.exe" "unterminated`, []string{`C:\h.exe`, `unterminated`}},
	}
	for _, tc := range cases {
		got, err := parseRunKey(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{``, `   `, `"C:\no closing quote`, `"" start`} {
		if got, err := parseRunKey(in); err == nil {
			t.Errorf("%q: got %q", in, got)
		}
	}
}
