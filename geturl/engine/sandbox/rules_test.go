package sandbox

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

var winRules = rules{windows: true}

// What Windows' rules make of hostile agent paths: each is refused with
// the error that says why, or cleaned to the one file it means. They run
// on Linux; a Windows scope judges paths with them.
func TestWindowsAgentPaths(t *testing.T) {
	long := strings.Repeat("n", MaxNameBytes+1)
	cases := []struct {
		in    string
		clean string // the relative '/'-path, or the native absolute one
		abs   bool
		err   error
	}{
		// Accepted, cleaned.
		{"a.txt", "a.txt", false, nil},
		{`src\main.go`, "src/main.go", false, nil},
		{`src/deep\x.txt`, "src/deep/x.txt", false, nil},
		{`src\..\a.txt`, "a.txt", false, nil},
		{`.\src\.\x`, "src/x", false, nil},
		{"src//x", "src/x", false, nil},
		{".", ".", false, nil},
		{"/project", ".", false, nil},
		{"/project/", ".", false, nil},
		{`\project\src\x`, "src/x", false, nil},
		{`/project\src/x`, "src/x", false, nil},
		{"C:/src/x", `C:\src\x`, true, nil},
		{`c:\Users\me\proj\a.txt`, `C:\Users\me\proj\a.txt`, true, nil},
		{`C:\`, `C:\`, true, nil},
		{`C:\..\..\x`, `C:\x`, true, nil},
		{"console.log", "console.log", false, nil},
		{"nul_device.txt", "nul_device.txt", false, nil},
		{"COM10", "COM10", false, nil},
		{"LPT", "LPT", false, nil},
		{".gitignore", ".gitignore", false, nil},
		{"a~b.txt", "a~b.txt", false, nil},
		{"toolong~1x.txt", "toolong~1x.txt", false, nil},
		{"héllo wörld.md", "héllo wörld.md", false, nil},
		{" lead.txt", " lead.txt", false, nil},

		// Traversal, with either separator.
		{`..\..\x`, "", false, ErrTraversal},
		{"../x", "", false, ErrTraversal},
		{`src\..\..\x`, "", false, ErrTraversal},
		{`/project\..\x`, "", false, ErrTraversal},
		{`src/..\../x`, "", false, ErrTraversal},

		// Every other root: outside the project.
		{`\\server\share\x`, "", false, ErrOutsideScope},
		{"//server/share/x", "", false, ErrOutsideScope},
		{`\\?\C:\x`, "", false, ErrOutsideScope},
		{`\\.\C:\x`, "", false, ErrOutsideScope},
		{`\\.\PhysicalDrive0`, "", false, ErrOutsideScope},
		{"//?/C:/x", "", false, ErrOutsideScope},
		{`\??\C:\x`, "", false, ErrOutsideScope},
		{`\x`, "", false, ErrOutsideScope},
		{"/etc/passwd", "", false, ErrOutsideScope},
		{"/projectx/a", "", false, ErrOutsideScope},
		{"C:x", "", false, ErrOutsideScope},
		{"C:", "", false, ErrOutsideScope},
		{`C:..\x`, "", false, ErrOutsideScope},
		{"a::$DATA", "", false, ErrOutsideScope}, // drive A:, relative

		// A drive or a stream inside a relative path.
		{`src\C:\x`, "", false, ErrReservedName},
		{"a.txt:evil", "", false, ErrReservedName},
		{"a.txt::$DATA", "", false, ErrReservedName},
		{`src\a::$DATA`, "", false, ErrReservedName},
		{`src\.git::$INDEX_ALLOCATION\config`, "", false, ErrReservedName},
		{"1:x", "", false, ErrReservedName},

		// Devices, in any directory, case, extension, trailing spaces.
		{"CON", "", false, ErrReservedName},
		{"con", "", false, ErrReservedName},
		{"nul.txt", "", false, ErrReservedName},
		{"Con .md", "", false, ErrReservedName},
		{"src/PRN", "", false, ErrReservedName},
		{`src\aux.c`, "", false, ErrReservedName},
		{"COM0", "", false, ErrReservedName},
		{"com9.log", "", false, ErrReservedName},
		{"LPT1", "", false, ErrReservedName},
		{"lpt0.x.y", "", false, ErrReservedName},
		{"COM¹", "", false, ErrReservedName},
		{"lpt².txt", "", false, ErrReservedName},
		{"COM³", "", false, ErrReservedName},
		{"CONIN$", "", false, ErrReservedName},
		{"conout$.txt", "", false, ErrReservedName},
		{"CLOCK$", "", false, ErrReservedName},
		{"NUL/../a.txt", "", false, ErrReservedName},
		{"/project/CON", "", false, ErrReservedName},
		{`C:\proj\nul`, "", false, ErrReservedName},

		// Trailing dots and spaces, which Windows drops.
		{"secret.", "", false, ErrReservedName},
		{"secret ", "", false, ErrReservedName},
		{"secret. .", "", false, ErrReservedName},
		{`src.\x`, "", false, ErrReservedName},
		{"...", "", false, ErrReservedName},
		{`.git.\config`, "", false, ErrReservedName},

		// Shapes of 8.3 short names.
		{"SECRET~1.TXT", "", false, ErrReservedName},
		{`PROGRA~1\x`, "", false, ErrReservedName},
		{"git~1", "", false, ErrReservedName},
		{"ab12cd~1.jso", "", false, ErrReservedName},

		// Characters NTFS cannot hold.
		{"a<b", "", false, ErrInvalidName},
		{"a>b", "", false, ErrInvalidName},
		{`a"b`, "", false, ErrInvalidName},
		{"a|b", "", false, ErrInvalidName},
		{"a?b", "", false, ErrInvalidName},
		{"*.go", "", false, ErrInvalidName},
		{"a\tb", "", false, ErrInvalidName},
		{"a\x1fb", "", false, ErrInvalidName},
		{"a\x7fb", "", false, ErrInvalidName},
		{"a\xffb", "", false, ErrInvalidName},
		{long, "", false, ErrPathTooLong},
	}
	for _, tc := range cases {
		clean, abs, err := winRules.agent(tc.in)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%q: (%q, %v, %v), want %v", tc.in, clean, abs, err, tc.err)
			} else if Code(err) == "" {
				t.Errorf("%q: %v has no code", tc.in, err)
			}
			continue
		}
		if err != nil || clean != tc.clean || abs != tc.abs {
			t.Errorf("%q: (%q, %v, %v), want (%q, %v)", tc.in, clean, abs, err, tc.clean, tc.abs)
		}
	}
}

// The unix rules are what they were: '\' and ':' are name bytes there.
func TestUnixAgentPaths(t *testing.T) {
	for in, want := range map[string]string{
		`C:\x`: `C:\x`, `..\..\x`: `..\..\x`, "CON": "CON", "secret.": "secret.", "a.txt:evil": "a.txt:evil",
		"/project/src/../x": "x", "SECRET~1.TXT": "SECRET~1.TXT",
	} {
		if got, abs, err := (rules{}).agent(in); err != nil || abs || got != want {
			t.Errorf("%q: (%q, %v, %v), want %q", in, got, abs, err, want)
		}
	}
}

// Containment on Windows: the separator is '\', ASCII letters compare
// without case, and every other byte exactly.
func TestWindowsWithin(t *testing.T) {
	root := `C:\Users\me\proj`
	cases := []struct {
		root, p string
		want    bool
	}{
		{root, root, true},
		{root, root + `\a.txt`, true},
		{root, `c:\users\ME\PROJ\a.txt`, true},
		{root, `C:\Users\me\projx\a.txt`, false},
		{root, `C:\Users\me\proj/a.txt`, false},
		{root, `C:\Users\me`, false},
		{root, `D:\Users\me\proj\a`, false},
		{root, `\\?\C:\Users\me\proj\a`, false},
		{`C:\`, `C:\x`, true},
		{`C:\`, `c:\`, true},
		{`C:\`, `D:\x`, false},
		{`C:\Ünïcode`, `C:\üNÏcode\x`, false}, // refusing more than NTFS is safe
		{`C:\k`, "C:\\\u212a\\x", false},      // the Kelvin sign is no K here
	}
	for _, tc := range cases {
		if got := winRules.within(tc.root, tc.p); got != tc.want {
			t.Errorf("within(%q, %q) = %v, want %v", tc.root, tc.p, got, tc.want)
		}
	}
	if got := winRules.rel(root, `c:\users\me\proj\src\x.go`); got != "src/x.go" {
		t.Errorf("rel = %q", got)
	}
	if got := winRules.virtual(root, root+`\src\x.go`); got != "/project/src/x.go" {
		t.Errorf("virtual = %q", got)
	}
	if got := winRules.virtual(root, root); got != VirtualRoot {
		t.Errorf("virtual(root) = %q", got)
	}
	if got := winRules.virtual(`C:\`, `C:\src`); got != "/project/src" {
		t.Errorf("virtual under a drive root = %q", got)
	}
	if !(rules{}).within("/", "/x") || (rules{}).within("/a", "/A/x") || (rules{}).within("/a", "/ab") {
		t.Error("unix within")
	}
}

// Where the walk goes from a symlink's target on Windows.
func TestWindowsLinkTarget(t *testing.T) {
	dir := `C:\proj\src`
	cases := []struct {
		target, want string
		abs, ok      bool
	}{
		{`..\a.txt`, `..\a.txt`, false, true},
		{"../a.txt", `..\a.txt`, false, true},
		{`C:\Windows`, `C:\Windows`, true, true},
		{`\??\C:\Windows`, `C:\Windows`, true, true},
		{`\\?\D:\x`, `D:\x`, true, true},
		{`\Windows`, `C:\Windows`, true, true},
		{`\\server\share\x`, `\\server\share\x`, true, true},
		{`\??\UNC\server\share`, `\??\UNC\server\share`, true, true},
		{"C:x", "", false, false},
		{"C:", "", false, false},
	}
	for _, tc := range cases {
		got, abs, ok := winRules.linkTarget(dir, tc.target)
		if got != tc.want || abs != tc.abs || ok != tc.ok {
			t.Errorf("%q: (%q, %v, %v), want (%q, %v, %v)", tc.target, got, abs, ok, tc.want, tc.abs, tc.ok)
		}
	}
	if got, _, _ := winRules.linkTarget(`\\srv\share\proj`, `\x`); got != `\\srv\share\x` {
		t.Errorf("rooted on a share: %q", got)
	}
	if got, abs, ok := (rules{}).linkTarget("/p", `\x`); got != `\x` || abs || !ok {
		t.Error("unix link targets are taken as they are")
	}
}

// FuzzWindowsAgent: no input panics, and whatever Windows' rules accept
// is a clean path of names each of which means one file: relative, or a
// drive path, every name passing windowsName.
func FuzzWindowsAgent(f *testing.F) {
	for _, s := range []string{
		"a.txt", `..\..\x`, `C:\x`, "C:x", `\\?\C:\x`, `\??\x`, "CON .md", "a::$DATA", "secret.",
		"SECRET~1.TXT", "/project/src", `\project\..\x`, "lpt¹", "a\x00b", "//server/share", "a\xffb",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if p == "" || strings.IndexByte(p, 0) >= 0 || len(p) > MaxPathBytes {
			return // the scope refuses these before the rules see them
		}
		clean, abs, err := winRules.agent(p)
		if err != nil {
			if Code(err) == "" {
				t.Fatalf("%q: %v without a code", p, err)
			}
			return
		}
		if !utf8.ValidString(clean) {
			t.Fatalf("%q: %q is not UTF-8", p, clean)
		}
		rest, sep := clean, "/"
		if abs {
			if !isDrive(clean) || clean[0] < 'A' || clean[0] > 'Z' {
				t.Fatalf("%q: absolute %q is no drive path", p, clean)
			}
			rest, sep = clean[3:], `\`
		} else if strings.ContainsAny(clean, `\:`) || strings.HasPrefix(clean, "/") {
			t.Fatalf("%q: relative %q has a root, a drive or a '\\'", p, clean)
		}
		if rest == "" || rest == "." {
			return
		}
		for name := range strings.SplitSeq(rest, sep) {
			if name == "" || name == "." || name == ".." {
				t.Fatalf("%q: %q is not clean", p, clean)
			}
			if err := windowsName(name); err != nil {
				t.Fatalf("%q: %q has the name %q: %v", p, clean, name, err)
			}
		}
		// Cleaning is idempotent: the clean path means itself.
		if again, abs2, err := winRules.agent(clean); err != nil || again != clean || abs2 != abs {
			t.Fatalf("%q: %q judged again: (%q, %v, %v)", p, clean, again, abs2, err)
		}
	})
}

// The names the Windows resolver opens one at a time: as they are, but
// for streams, what NTFS cannot hold, and what no realpath has.
func TestNTName(t *testing.T) {
	for name, want := range map[string]error{
		"a.txt": nil, "CON": nil, "secret.": nil, "PROGRA~1": nil, "héllo": nil,
		"": ErrInvalidPath, ".": ErrInvalidPath, "..": ErrInvalidPath,
		"a:b": ErrReservedName, "a::$DATA": ErrReservedName,
		"a/b": ErrInvalidName, "a*": ErrInvalidName, "a\x00": ErrInvalidName,
		strings.Repeat("n", MaxNameBytes+1): ErrPathTooLong,
	} {
		if err := ntName(name); want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", name, err, want)
		}
	}
}

// Names from a symlink's target, on Windows: judged as an agent's are,
// but for the short-name shape; on unix not at all.
func TestHostName(t *testing.T) {
	for name, want := range map[string]error{
		"a.txt": nil, "PROGRA~1": nil, "CON": ErrReservedName, "x.": ErrReservedName,
		"a:b": ErrReservedName, "a?": ErrInvalidName,
	} {
		if err := winRules.hostName(name); want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", name, err, want)
		}
		if err := (rules{}).hostName(name); err != nil {
			t.Errorf("unix %q: %v", name, err)
		}
	}
}

// BenchmarkAgentRules: judging a typical agent path by each OS's rules.
func BenchmarkAgentRules(b *testing.B) {
	const p = `src\engine\sandbox\rules_windows.go`
	for _, r := range []struct {
		name string
		r    rules
	}{{"unix", rules{}}, {"windows", winRules}} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := r.r.agent(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
