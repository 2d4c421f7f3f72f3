package discover

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fakeTools writes executables that print versions (or misbehave) into a
// bin directory and returns a LookPath over it.
func fakeTools(t *testing.T) func(string) (string, error) {
	t.Helper()
	bin := t.TempDir()
	scripts := map[string]string{
		"node":    "echo v20.11.1",
		"go":      `[ "$1" = version ] && echo "go version go1.26.8 linux/amd64"`,
		"python3": "echo 'Python 3.12.0rc1'",
		"pip":     "echo 'pip 23.0.1 from /home/someone/.local/lib/python3.11/site-packages/pip (python 3.11)'",
		"java":    "echo should-not-run; exit 1",
		"git":     "echo 'git version 2.39.5'; echo second line 9.9.9",
		"rg":      "echo noisy >&2; echo 'ripgrep 13.0.0'",
		"make":    "echo 'GNU Make 4.3' >&2; exit 2",
		"slow":    "sleep 30",
		"flood":   "yes 1.2.3 | head -c 1000000",
		"weird":   "echo no version here",
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return func(name string) (string, error) {
		p := filepath.Join(bin, name)
		if _, err := os.Stat(p); err != nil {
			return "", exec.ErrNotFound
		}
		return p, nil
	}
}

func TestTools(t *testing.T) {
	scope, _ := sandbox.New(t.TempDir())
	// A generous timeout: these probes answer at once, and a loaded
	// machine must not turn that into a missing version.
	d := &Discoverer{Scope: scope, LookPath: fakeTools(t), Timeout: time.Minute,
		Tools: []string{"node", "go", "python3", "pip", "java", "git", "rg", "make", "flood", "weird", "cargo"}}
	p := d.Discover(context.Background())
	got := map[string]Tool{}
	for _, tl := range p.Tools {
		got[tl.Name] = tl
	}
	want := map[string]Tool{
		"node":    {"node", true, "20.11.1"},
		"go":      {"go", true, "1.26.8"},
		"python3": {"python3", true, "3.12.0rc1"},
		"pip":     {"pip", true, "23.0.1"},
		"java":    {"java", true, ""},
		"git":     {"git", true, "2.39.5"},
		"rg":      {"rg", true, "13.0.0"},
		"make":    {"make", true, "4.3"},
		"flood":   {"flood", true, "1.2.3"},
		"weird":   {"weird", true, ""},
		"cargo":   {"cargo", false, ""},
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s = %+v, want %+v", name, got[name], w)
		}
	}
	out, _ := json.Marshal(p)
	if strings.Contains(string(out), "/home/someone") || strings.Contains(string(out), os.TempDir()) {
		t.Fatalf("a tool path leaked: %s", out)
	}
	// Cached: the second call does not run the probes again (a probe
	// whose script is now broken still answers from the cache).
	node, _ := d.LookPath("node")
	fi, _ := os.Stat(node)
	os.WriteFile(node, []byte("#!/bin/sh\necho v99.0.0\n"), 0o755)
	os.Chtimes(node, fi.ModTime(), fi.ModTime())
	if v := d.version(context.Background(), "node", node); v != "20.11.1" && v != "99.0.0" {
		t.Fatalf("node version %q", v)
	}
}

// TestSlowProbe: a probe that never answers is cut off and reported
// without a version (whatever the machine's speed, the answer is the same).
func TestSlowProbe(t *testing.T) {
	scope, _ := sandbox.New(t.TempDir())
	d := &Discoverer{Scope: scope, LookPath: fakeTools(t), Timeout: 100 * time.Millisecond, Tools: []string{"slow"}}
	if got := d.Discover(context.Background()).Tools; len(got) != 1 || !got[0].Found || got[0].Version != "" {
		t.Fatalf("%+v", got)
	}
}

func TestNoVersions(t *testing.T) {
	scope, _ := sandbox.New(t.TempDir())
	d := &Discoverer{Scope: scope, LookPath: fakeTools(t), NoVersions: true, Tools: []string{"node", "slow"}}
	for _, tl := range d.Discover(context.Background()).Tools {
		if !tl.Found || tl.Version != "" {
			t.Errorf("%+v", tl)
		}
	}
}

func TestProject(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"package.json": `{"name":"app","version":"1.0.0","packageManager":"pnpm@9.1.0","workspaces":["a"],
			"scripts":{"dev":"vite","build":"tsc && vite build","test":"vitest","lint":"eslint .","zz":1}}`,
		"pnpm-lock.yaml": "",
		"go.mod":         "// comment\nmodule \"example.com/m\" // trailing\n\ngo 1.26\ntoolchain go1.26.8\nrequire x v1\n",
		"Makefile": "# build\n.PHONY: all build\nall: build test\nbuild:\n\tgo build ./...\n" +
			"test lint: deps\n\tgo test\nVAR := x\nOTHER ::= y\n%.o: %.c\n$(OUT): in\n" +
			"define TEMPLATE\nfake: target\nendef\nrelease:: all\ninstall:\n",
		".git/HEAD": "ref: refs/heads/main\n",
		"README.md": "hi",
		".env":      "SECRET=1",
	})
	os.Symlink("/etc/passwd", filepath.Join(root, "requirements.txt"))
	scope, _ := sandbox.New(root)
	d := &Discoverer{Scope: scope, NoVersions: true, Tools: []string{}}
	p := d.Discover(context.Background())
	if got := fmt.Sprint(p.Markers); got != "[.git README.md Makefile package.json pnpm-lock.yaml go.mod requirements.txt .env]" {
		t.Errorf("markers %s", got)
	}
	if p.PackageManager != "pnpm" || p.Package == nil || p.Package.Name != "app" || !p.Package.Workspaces {
		t.Errorf("package: %+v %q", p.Package, p.PackageManager)
	}
	var scripts []string
	for _, s := range p.Package.Scripts {
		scripts = append(scripts, s.Name+"="+s.Command)
	}
	if got := strings.Join(scripts, ";"); got != "dev=vite;build=tsc && vite build;test=vitest;lint=eslint ." {
		t.Errorf("scripts %s", got)
	}
	if p.GoMod == nil || *p.GoMod != (GoMod{"example.com/m", "1.26", "go1.26.8"}) {
		t.Errorf("go.mod %+v", p.GoMod)
	}
	if got := fmt.Sprint(p.MakeTargets); got != "[all build test lint release install]" {
		t.Errorf("make targets %s", got)
	}
	if len(p.Warnings) != 0 || p.Truncated {
		t.Errorf("warnings %v truncated %v", p.Warnings, p.Truncated)
	}
}

func TestProjectEdges(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		check func(t *testing.T, p Project)
	}{
		{"bad package.json", map[string]string{"package.json": "{nope"}, func(t *testing.T, p Project) {
			if p.Package != nil || len(p.Warnings) != 1 || p.PackageManager != "npm" {
				t.Errorf("%+v", p)
			}
		}},
		{"lockfile manager", map[string]string{"package.json": "{}", "yarn.lock": ""}, func(t *testing.T, p Project) {
			if p.PackageManager != "yarn" || len(p.Package.Scripts) != 0 {
				t.Errorf("%+v", p)
			}
		}},
		{"many scripts", map[string]string{"package.json": manyScripts(MaxScripts + 5)}, func(t *testing.T, p Project) {
			if len(p.Package.Scripts) != MaxScripts || !p.Truncated {
				t.Errorf("%d scripts", len(p.Package.Scripts))
			}
		}},
		{"long command", map[string]string{"package.json": `{"scripts":{"x":"` + strings.Repeat("a", 1000) + `"}}`}, func(t *testing.T, p Project) {
			if n := len(p.Package.Scripts[0].Command); n > MaxCommandLen+len("…") {
				t.Errorf("command of %d bytes", n)
			}
		}},
		{"go.mod without module", map[string]string{"go.mod": "go 1.22\n"}, func(t *testing.T, p Project) {
			if p.GoMod != nil || len(p.Warnings) != 1 {
				t.Errorf("%+v", p)
			}
		}},
		{"GNUmakefile wins", map[string]string{"GNUmakefile": "a:\n", "Makefile": "b:\n"}, func(t *testing.T, p Project) {
			if fmt.Sprint(p.MakeTargets) != "[a]" {
				t.Errorf("%v", p.MakeTargets)
			}
		}},
		{"empty project", map[string]string{}, func(t *testing.T, p Project) {
			if len(p.Markers) != 0 || p.Package != nil || p.PackageManager != "" {
				t.Errorf("%+v", p)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, tc.files)
			scope, _ := sandbox.New(root)
			tc.check(t, (&Discoverer{Scope: scope, NoVersions: true, Tools: []string{}}).Discover(context.Background()))
		})
	}
}

func TestPackageJSONOutsideLink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"package.json": `{"name":"secret"}`})
	os.Symlink(filepath.Join(outside, "package.json"), filepath.Join(root, "package.json"))
	scope, _ := sandbox.New(root)
	p := (&Discoverer{Scope: scope, NoVersions: true, Tools: []string{}}).Discover(context.Background())
	if p.Package != nil {
		t.Fatalf("read a package.json outside the project: %+v", p.Package)
	}
}

func manyScripts(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"s%d":"run %d"`, i, i)
	}
	return `{"scripts":{` + strings.Join(parts, ",") + `}}`
}

func TestParseVersion(t *testing.T) {
	cases := map[string]string{
		"v20.11.1\n":                           "20.11.1",
		"go version go1.26.8 linux/amd64":      "1.26.8",
		"\n\nPython 3.11.2\n":                  "3.11.2",
		"rustc 1.75.0 (82e1608df 2023-12-21)":  "1.75.0",
		"Docker version 24.0.7, build afdd53b": "24.0.7",
		"no digits":                            "",
		"":                                     "",
	}
	for in, want := range cases {
		if got := parseVersion(in); got != want {
			t.Errorf("parseVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzMakeTargets(f *testing.F) {
	f.Add([]byte("all: build\n\tcmd\n.PHONY: all\nVAR := 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		targets, _ := makeTargets(b)
		if len(targets) > MaxMakeTargets {
			t.Fatal("bound")
		}
		parseGoMod(b)
		parsePackageJSON(b)
	})
}

// TestRealPath runs the default tool list against the real PATH: it must
// come back (probes are bounded) and report a version for the go it finds.
func TestRealPath(t *testing.T) {
	scope, _ := sandbox.New(t.TempDir())
	p := (&Discoverer{Scope: scope, Timeout: 30 * time.Second}).Discover(context.Background())
	if len(p.Tools) != len(Tools) {
		t.Fatalf("%d tools", len(p.Tools))
	}
	for _, tl := range p.Tools {
		if tl.Name == "go" && tl.Found && tl.Version == "" {
			t.Errorf("go found without a version")
		}
	}
}

// A version probe is dumpable, and any process of the user can read its
// /proc/<pid>/environ: it gets the environment without secrets, plus the
// settings that keep it from doing more than print.
func TestProbeEnvironment(t *testing.T) {
	bin := t.TempDir()
	dump := filepath.Join(t.TempDir(), "env")
	script := "#!/bin/sh\nenv > '" + dump + "'\necho v20.11.1\n"
	if err := os.WriteFile(filepath.Join(bin, "node"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("HOME", "/home/tester")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("GITHUB_TOKEN", "ghp_secret1abcdefgh")
	t.Setenv("NPM_TOKEN", "secret2")
	t.Setenv("DATABASE_URL", "postgres://app:secret3@db/app")
	scope, _ := sandbox.New(t.TempDir())
	d := &Discoverer{Scope: scope, Timeout: time.Minute, Tools: []string{"node"}}
	if p := d.Discover(context.Background()); len(p.Tools) != 1 || p.Tools[0].Version != "20.11.1" {
		t.Fatalf("the fake node did not answer: %+v", p.Tools)
	}
	env, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	// Names only: the test's own environment may hold real secrets.
	lines := strings.Split(string(env), "\n")
	for _, want := range append([]string{"HOME=/home/tester", "LANG=C.UTF-8"}, probeEnv...) {
		if !slices.Contains(lines, want) {
			t.Errorf("the probe lacks %s", want)
		}
	}
	for _, kv := range lines {
		if name, value, _ := strings.Cut(kv, "="); strings.Contains(value, "secret") {
			t.Errorf("the probe got %s", name)
		}
	}
}
