package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture builds a project with every kind of link the resolver must judge,
// plus an outside directory the links try to reach.
type fixture struct {
	scope   *Scope
	root    string // canonical
	outside string // canonical
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	root := mustReal(t, t.TempDir())
	outside := mustReal(t, t.TempDir())
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "a\n")
	write("src/main.go", "package main\n")
	write("src/deep/x.txt", "x\n")
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	link("a.txt", "link_in.txt")
	link(filepath.Join(root, "src"), "link_abs_in")
	link("/etc", "link_etc")
	link(outside, "dirlink")
	link(filepath.Join(outside, "secret.txt"), "link_secret")
	link("chain2", "chain1")
	link("chain3", "chain2")
	link("src", "chain3")
	link("nonexist.txt", "dangling_in")
	link("src/newdir/new.txt", "dangling_in_deep")
	link(filepath.Join(outside, "new.txt"), "dangling_out")
	link("loop2", "loop1")
	link("loop1", "loop2")
	link("../"+filepath.Base(outside), "rel_out") // sibling temp dirs share a parent
	link("src/../a.txt", "dotdot_link")
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{scope: s, root: root, outside: outside}
}

func mustReal(t testing.TB, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestNewCanonicalizes(t *testing.T) {
	f := newFixture(t)
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(f.root, alias); err != nil {
		t.Fatal(err)
	}
	s, err := New(alias + "/./")
	if err != nil {
		t.Fatal(err)
	}
	if s.Root() != f.root {
		t.Fatalf("root = %q, want %q", s.Root(), f.root)
	}
	if _, err := New(filepath.Join(f.root, "a.txt")); !errors.Is(err, ErrNotDir) {
		t.Fatalf("file root: err = %v", err)
	}
	if _, err := New(filepath.Join(f.root, "missing")); err == nil {
		t.Fatal("missing root accepted")
	}
}

func TestResolveExisting(t *testing.T) {
	f := newFixture(t)
	aliases := t.TempDir()
	alias := filepath.Join(aliases, "alias")
	for link, target := range map[string]string{"alias": f.root, "alias_file": filepath.Join(f.root, "a.txt"),
		"alias_out": f.outside, "alias_missing": filepath.Join(f.root, "nope.txt")} {
		if err := os.Symlink(target, filepath.Join(aliases, link)); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("d/", MaxPathBytes/2+1)
	cases := []struct {
		name    string
		in      string
		virtual string
		host    string // relative to root
		symlink bool
		err     error
	}{
		{"relative", "a.txt", "/project/a.txt", "a.txt", false, nil},
		{"dot", ".", "/project", ".", false, nil},
		{"virtual root", "/project", "/project", ".", false, nil},
		{"virtual root slash", "/project/", "/project", ".", false, nil},
		{"virtual", "/project/src/main.go", "/project/src/main.go", "src/main.go", false, nil},
		{"native inside", f.root + "/src/main.go", "/project/src/main.go", "src/main.go", false, nil},
		{"native root", f.root, "/project", ".", false, nil},
		{"native through alias", alias + "/a.txt", "/project/a.txt", "a.txt", false, nil},
		{"native alias of the root", alias, "/project", ".", true, nil},
		{"native alias of the root, slash", alias + "/", "/project", ".", true, nil},
		{"native alias of a file", filepath.Join(aliases, "alias_file"), "/project/a.txt", "a.txt", true, nil},
		{"native alias through a link inside", alias + "/link_in.txt", "/project/a.txt", "a.txt", true, nil},
		{"dotdot in the middle", "src/deep/../main.go", "/project/src/main.go", "src/main.go", false, nil},
		{"dotdot virtual inside", "/project/src/../a.txt", "/project/a.txt", "a.txt", false, nil},
		{"trailing slash dir", "src/", "/project/src", "src", false, nil},
		{"symlink inside", "link_in.txt", "/project/link_in.txt", "a.txt", true, nil},
		{"abs symlink inside", "link_abs_in/main.go", "/project/link_abs_in/main.go", "src/main.go", false, nil},
		{"dir symlink chain", "chain1/deep/x.txt", "/project/chain1/deep/x.txt", "src/deep/x.txt", false, nil},
		{"chain itself", "chain1", "/project/chain1", "src", true, nil},
		{"link with dotdot target", "dotdot_link", "/project/dotdot_link", "a.txt", true, nil},

		{"traversal", "../x", "", "", false, ErrTraversal},
		{"traversal deep", "src/../../x", "", "", false, ErrTraversal},
		{"traversal virtual", "/project/../etc/passwd", "", "", false, ErrTraversal},
		{"absolute outside", "/etc/passwd", "", "", false, ErrOutsideScope},
		{"native alias of outside", filepath.Join(aliases, "alias_out", "secret.txt"), "", "", false, ErrOutsideScope},
		{"native alias dangling in", filepath.Join(aliases, "alias_missing"), "", "", false, ErrNotFound},
		{"native alias to an escaping link", alias + "/link_secret", "", "", false, ErrOutsideScope},
		{"absolute outside root dir", "/", "", "", false, ErrOutsideScope},
		{"native dotdot out", f.root + "/../x", "", "", false, ErrOutsideScope},
		{"symlink to /etc", "link_etc/passwd", "", "", false, ErrSymlinkEscape},
		{"symlink to /etc itself", "link_etc", "", "", false, ErrSymlinkEscape},
		{"symlinked parent dir", "dirlink/secret.txt", "", "", false, ErrSymlinkEscape},
		{"symlink to outside file", "link_secret", "", "", false, ErrSymlinkEscape},
		{"relative link out", "rel_out/secret.txt", "", "", false, ErrSymlinkEscape},
		{"dangling in", "dangling_in", "", "", false, ErrNotFound},
		{"dangling out", "dangling_out", "", "", false, ErrSymlinkEscape},
		{"loop", "loop1", "", "", false, ErrSymlinkLoop},
		{"missing", "nope.txt", "", "", false, ErrNotFound},
		{"under a file", "a.txt/x", "", "", false, ErrNotDirectory},
		{"nul", "a\x00b", "", "", false, ErrInvalidPath},
		{"empty", "", "", "", false, ErrInvalidPath},
		{"too long", long, "", "", false, ErrPathTooLong},
		{"long name", strings.Repeat("n", 256), "", "", false, ErrPathTooLong},
		{"windows drive literal", `C:\x`, "", "", false, ErrNotFound},
		{"windows traversal literal", `..\..\x`, "", "", false, ErrNotFound},
		{"project prefix lookalike", "/projectx/a.txt", "", "", false, ErrOutsideScope},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.scope.ResolveExisting(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				assertSafe(t, f, err)
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if got.Virtual != tc.virtual {
				t.Errorf("virtual = %q, want %q", got.Virtual, tc.virtual)
			}
			if want := filepath.Join(f.root, tc.host); got.Host != want {
				t.Errorf("host = %q, want %q", got.Host, want)
			}
			if got.Symlink != tc.symlink || !got.Exists {
				t.Errorf("symlink, exists = %v, %v", got.Symlink, got.Exists)
			}
		})
	}
}

func TestResolveNew(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name    string
		in      string
		virtual string
		host    string // relative to root
		exists  bool
		err     error
	}{
		{"new file", "new.txt", "/project/new.txt", "new.txt", false, nil},
		{"new deep", "src/n1/n2/new.txt", "/project/src/n1/n2/new.txt", "src/n1/n2/new.txt", false, nil},
		{"existing", "a.txt", "/project/a.txt", "a.txt", true, nil},
		{"virtual new", "/project/src/new.go", "/project/src/new.go", "src/new.go", false, nil},
		{"native new", f.root + "/src/new.go", "/project/src/new.go", "src/new.go", false, nil},
		{"through dir link", "chain1/new.go", "/project/chain1/new.go", "src/new.go", false, nil},
		{"dangling in", "dangling_in", "/project/dangling_in", "nonexist.txt", false, nil},
		{"dangling in deep", "dangling_in_deep", "/project/dangling_in_deep", "src/newdir/new.txt", false, nil},
		{"windows drive literal", `C:\x`, `/project/C:\x`, `C:\x`, false, nil},
		{"windows traversal literal", `..\..\x`, `/project/..\..\x`, `..\..\x`, false, nil},
		{"dotdot middle", "src/n1/../new.go", "/project/src/new.go", "src/new.go", false, nil},

		{"dangling out", "dangling_out", "", "", false, ErrSymlinkEscape},
		{"under dir link out", "dirlink/new.txt", "", "", false, ErrSymlinkEscape},
		{"under /etc link", "link_etc/new.conf", "", "", false, ErrSymlinkEscape},
		{"traversal", "../new.txt", "", "", false, ErrTraversal},
		{"absolute outside", "/tmp/new.txt", "", "", false, ErrOutsideScope},
		{"absolute outside dir", f.outside + "/new.txt", "", "", false, ErrOutsideScope},
		{"under a file", "a.txt/new", "", "", false, ErrNotDirectory},
		{"loop", "loop1/x", "", "", false, ErrSymlinkLoop},
		{"nul", "new\x00.txt", "", "", false, ErrInvalidPath},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.scope.ResolveNew(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				assertSafe(t, f, err)
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if got.Virtual != tc.virtual {
				t.Errorf("virtual = %q, want %q", got.Virtual, tc.virtual)
			}
			if want := filepath.Join(f.root, tc.host); got.Host != want {
				t.Errorf("host = %q, want %q", got.Host, want)
			}
			if got.Exists != tc.exists {
				t.Errorf("exists = %v", got.Exists)
			}
		})
	}
}

func TestResolveLink(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		in      string
		host    string
		symlink bool
		err     error
	}{
		{"link_etc", "link_etc", true, nil},
		{"dangling_out", "dangling_out", true, nil},
		{"a.txt", "a.txt", false, nil},
		{"chain1/main.go", "src/main.go", false, nil},
		{"dirlink/secret.txt", "", false, ErrSymlinkEscape},
		{"missing", "", false, ErrNotFound},
		{"../x", "", false, ErrTraversal},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := f.scope.ResolveLink(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Host != filepath.Join(f.root, tc.host) || got.Symlink != tc.symlink {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func TestErrorFamilies(t *testing.T) {
	for _, kind := range []error{ErrTraversal, ErrSymlinkEscape} {
		if err := newErr(kind); !errors.Is(err, ErrOutsideScope) {
			t.Errorf("%v does not match ErrOutsideScope", kind)
		}
	}
	if !errors.Is(newErr(ErrNotFound), os.ErrNotExist) {
		t.Error("ErrNotFound does not match fs.ErrNotExist")
	}
	if Code(newErr(ErrSymlinkEscape)) != "symlink_escape" || Code(errors.New("x")) != "" {
		t.Error("Code")
	}
	for kind, code := range codes {
		if msg := kind.Error(); code == "" || strings.ToLower(msg[:1]) != msg[:1] {
			t.Errorf("%v: code %q / message not lowercase", kind, code)
		}
	}
}

func TestVirtualAndRedact(t *testing.T) {
	f := newFixture(t)
	cases := []struct{ in, want string }{
		{f.root, "/project"},
		{f.root + "/src/main.go", "/project/src/main.go"},
		{f.root + "x/y", ""},
		{"/etc/passwd", ""},
		{f.outside, ""},
	}
	for _, tc := range cases {
		if got := f.scope.Virtual(tc.in); got != tc.want {
			t.Errorf("Virtual(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if rel, ok := f.scope.Rel(f.root + "/src/a"); !ok || rel != "src/a" {
		t.Errorf("Rel = %q, %v", rel, ok)
	}
	if rel, ok := f.scope.Rel(f.root); !ok || rel != "." {
		t.Errorf("Rel(root) = %q, %v", rel, ok)
	}
	for in, want := range map[string]string{
		"open " + f.root + "/x: no such file": "open /project/x: no such file",
		"stat " + f.root + ": denied":         "stat /project: denied",
		f.root:                                "/project",
		`"` + f.root + `"`:                    `"/project"`,
		f.root + "2/x and " + f.root + "/y":   f.root + "2/x and /project/y",
		"nothing here":                        "nothing here",
	} {
		if got := f.scope.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// assertSafe checks an agent-facing error names no host path.
func assertSafe(t *testing.T, f fixture, err error) {
	t.Helper()
	msg := err.Error()
	for _, host := range []string{f.root, f.outside, "/etc", "/tmp"} {
		if strings.Contains(msg, host) {
			t.Fatalf("error %q leaks %q", msg, host)
		}
	}
}

func TestDisplay(t *testing.T) {
	f := newFixture(t)
	cases := []struct{ in, want string }{
		{"src/../a.txt", "/project/a.txt"},
		{f.root + "/x", "/project/x"},
		{"/project/", "/project"},
		{"../x", "../x"},
		{"/etc/passwd", "/etc/passwd"},
		{f.root + "2/x", f.root + "2/x"},
		{"a\x00b", `a\0b`},
		{"link_etc/passwd", "/project/link_etc/passwd"},
	}
	for _, tc := range cases {
		if got := f.scope.Display(tc.in); got != tc.want {
			t.Errorf("Display(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The escape tables' Windows rows: a scope judging paths by Windows'
// rules (a Windows scope's, run here on a Linux fixture) refuses every
// hostile spelling before it looks at the disk, through each way in, and
// takes '\' for a separator in what it accepts.
func TestResolveWindowsRows(t *testing.T) {
	f := newFixture(t)
	sc := *f.scope
	sc.rules = winRules
	refused := []struct {
		in  string
		err error
	}{
		{`..\..\x`, ErrTraversal},
		{`src\..\..\x`, ErrTraversal},
		{`/project\..\x`, ErrTraversal},
		{`C:x`, ErrOutsideScope},
		{`\\server\share\x`, ErrOutsideScope},
		{`\\?\C:\x`, ErrOutsideScope},
		{`\\.\CON`, ErrOutsideScope},
		{`\??\C:\x`, ErrOutsideScope},
		{`\x`, ErrOutsideScope},
		{"CON", ErrReservedName},
		{`src\nul.txt`, ErrReservedName},
		{"Con .md", ErrReservedName},
		{"COM¹", ErrReservedName},
		{"CONOUT$", ErrReservedName},
		{"a.txt:evil", ErrReservedName},
		{"a.txt::$DATA", ErrReservedName},
		{"a.txt.", ErrReservedName},
		{"a.txt ", ErrReservedName},
		{`SRC~1\main.go`, ErrReservedName},
		{"a<b", ErrInvalidName},
		{"a\x01b", ErrInvalidName},
	}
	for _, tc := range refused {
		for kind, resolve := range map[string]func(string) (Path, error){
			"ResolveExisting": sc.ResolveExisting, "ResolveNew": sc.ResolveNew, "ResolveLink": sc.ResolveLink,
			"ResolveMutable": func(p string) (Path, error) { return sc.ResolveMutable(p, Allow{Autorun: true}) },
		} {
			got, err := resolve(tc.in)
			if !errors.Is(err, tc.err) {
				t.Errorf("%s(%q) = %+v, %v; want %v", kind, tc.in, got, err, tc.err)
				continue
			}
			assertSafe(t, f, err)
		}
	}
	for in, want := range map[string]string{
		`src\deep\x.txt`:       "src/deep/x.txt",
		`/project\src\main.go`: "src/main.go",
		`src\deep\..\main.go`:  "src/main.go",
	} {
		// Containment compares '\'-separated paths under these rules, so
		// on a Linux disk only the first step runs: the host path named.
		host, inside, err := sc.candidate(in)
		if err != nil || !inside || host != filepath.Join(f.root, want) {
			t.Errorf("candidate(%q) = %q, %v, %v; want %s", in, host, inside, err, want)
		}
	}
	// A symlink's target is no agent's path, but its names are judged the
	// same way: a link to a device or to a name Win32 would shorten is
	// refused, not followed.
	for link, target := range map[string]string{"to_con": "CON", "to_dot": "a.txt.", "to_stream": "a.txt:evil"} {
		if err := os.Symlink(target, filepath.Join(f.root, link)); err != nil {
			t.Fatal(err)
		}
		if _, err := sc.ResolveNew(link); !errors.Is(err, ErrReservedName) {
			t.Errorf("ResolveNew(%q -> %q): %v, want reserved_name", link, target, err)
		}
	}
	// A name Windows would alias is refused even where it spells a
	// metadata or configuration path the other checks know.
	for _, in := range []string{`.git.\config`, `.git::$INDEX_ALLOCATION\config`, `GIT~1\config`, `.vscode \tasks.json`} {
		if _, err := sc.ResolveMutable(in, Allow{}); !errors.Is(err, ErrReservedName) {
			t.Errorf("ResolveMutable(%q): %v, want reserved_name", in, err)
		}
	}
}
