package search

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// FuzzCompile feeds arbitrary patterns and globs to the compilers: they
// must never panic, and what compiles must print as Rust syntax or say it
// cannot.
func FuzzCompile(f *testing.F) {
	for _, c := range grepCases {
		g := ""
		if len(c.req.Include) > 0 {
			g = c.req.Include[0]
		}
		f.Add(c.req.Pattern, g, c.req.Regex, c.req.IgnoreCase)
	}
	f.Fuzz(func(t *testing.T, pattern, glob string, regex, icase bool) {
		if m, err := compilePattern(pattern, regex, icase); err == nil {
			m.index([]byte(pattern))
		}
		if re, err := globRegexp(glob); err == nil && re != nil {
			re.MatchString(glob)
		}
	})
}

// FuzzRegexAgree is the differential check behind the "same results"
// promise: one line, one pattern, both engines. Lines that are not UTF-8
// are the documented exception.
func FuzzRegexAgree(f *testing.F) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		f.Skip("rg not on PATH")
	}
	for _, c := range grepCases {
		if c.req.Regex {
			f.Add(c.req.Pattern, "foo bar héllo_wörld 42 <a><b> \u212a ſ", true, c.req.IgnoreCase)
		}
	}
	f.Add("foo", "FOO foo", false, true)
	root := f.TempDir()
	scope, err := sandbox.New(root)
	if err != nil {
		f.Fatal(err)
	}
	file := filepath.Join(root, "f.txt")
	goS := &Searcher{Scope: scope}
	rgS := &Searcher{Scope: scope, RG: rg}
	f.Fuzz(func(t *testing.T, pattern, line string, regex, icase bool) {
		if !utf8.ValidString(line) || !utf8.ValidString(pattern) {
			return
		}
		if err := os.WriteFile(file, []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		req := GrepRequest{Path: "f.txt", Pattern: pattern, Regex: regex, IgnoreCase: icase}
		a, errA := goS.Grep(context.Background(), req)
		b, errB := rgS.Grep(context.Background(), req)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("errors differ: %v / %v", errA, errB)
		}
		a.Engine, b.Engine = "", ""
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("pattern %q on %q:\ngo %s\nrg %s", pattern, line, ja, jb)
		}
	})
}

// FuzzGlobAgree checks include globs select the same files in both engines.
func FuzzGlobAgree(f *testing.F) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		f.Skip("rg not on PATH")
	}
	for _, c := range grepCases {
		for _, g := range c.req.Include {
			f.Add(g)
		}
	}
	tr := newTree(f)
	goS := &Searcher{Scope: tr.scope, Limits: testLimits}
	rgS := &Searcher{Scope: tr.scope, Limits: testLimits, RG: rg}
	f.Fuzz(func(t *testing.T, glob string) {
		if !utf8.ValidString(glob) {
			return
		}
		req := GrepRequest{Pattern: "foo", Include: []string{glob}}
		a, errA := goS.Grep(context.Background(), req)
		b, errB := rgS.Grep(context.Background(), req)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("errors differ: %v / %v", errA, errB)
		}
		if b.Engine == "go" {
			return // rg refused the glob and the Go engine answered: same by construction
		}
		a.Engine, b.Engine = "", ""
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("glob %q:\ngo %s\nrg %s", glob, ja, jb)
		}
	})
}
