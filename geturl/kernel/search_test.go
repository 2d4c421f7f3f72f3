package kernel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/internal/corpus"
	"github.com/hubdev/hub/geturl/transport"
)

type grepResult struct {
	OK      bool   `json:"ok"`
	Mode    string `json:"mode"`
	Engine  string `json:"engine"`
	Count   int    `json:"count"`
	Matches []struct {
		Path string `json:"path"`
		Line int    `json:"line"`
		Text string `json:"text"`
	} `json:"matches"`
}

type findResult struct {
	OK      bool `json:"ok"`
	Count   int  `json:"count"`
	Entries []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
		Line int    `json:"line"`
	} `json:"entries"`
}

var searchTree = map[string]string{
	"src/app.ts":       "import x from './x';\nconst a = 1 + 2;\n// TODO: fix a+b\n",
	"src/util/math.ts": "export function add(a: number, b: number) { return a+b; }\n",
	"src/x.go":         "package x\n// TODO(go): later\n",
	"README.md":        "# demo\nfoo(bar) and foo\\s+bar\n",
}

// engines runs f on a kernel with rg and on one with the Go engine.
func engines(t *testing.T, tree map[string]string, f func(t *testing.T, p *project)) {
	for _, noRG := range []bool{false, true} {
		name := "rg"
		if noRG {
			name = "go"
		}
		t.Run(name, func(t *testing.T) {
			p := newProject(t, tree)
			p.k = New(Options{NoRG: noRG})
			if !noRG && p.k.rg == "" {
				t.Skip("rg not on PATH")
			}
			f(t, p)
		})
	}
}

func TestGrep(t *testing.T) {
	engines(t, searchTree, func(t *testing.T, p *project) {
		var g grepResult
		p.ok("/g?raw=TODO", &g)
		if g.Count != 2 || g.Mode != "literal" || g.Matches[0].Path != "/project/src/app.ts" || g.Matches[0].Line != 3 {
			t.Fatalf("%+v", g)
		}
		g = grepResult{}
		p.ok("/g?path=src&include=*.ts&raw=a~qb", &g) // ~q is a literal +
		if g.Count != 2 {
			t.Fatalf("a+b: %+v", g)
		}
		g = grepResult{}
		p.ok("/g?raw=1+~q+2", &g) // + is a space
		if g.Count != 1 || g.Matches[0].Text != "const a = 1 + 2;" {
			t.Fatalf("1 + 2: %+v", g)
		}
		g = grepResult{}
		p.ok("/g?path=README.md&raw=foo(bar)", &g) // literal: parentheses are text
		if g.Count != 1 {
			t.Fatalf("literal parens: %+v", g)
		}
		g = grepResult{}
		p.ok("/g?regex=1&raw=TODO\\(go\\)", &g)
		if g.Count != 1 || g.Mode != "regex" {
			t.Fatalf("regex: %+v", g)
		}
		for _, q := range []string{"grep=TODO", "query=TODO", "pattern=TODO", "regex=false&raw=TODO", "regex=0&raw=TODO"} {
			g = grepResult{}
			p.ok("/g?"+q, &g)
			if g.Count != 2 {
				t.Fatalf("%s: %+v", q, g)
			}
		}
		g = grepResult{}
		p.ok("/g?ignoreCase=1&raw=todo", &g)
		if g.Count != 2 {
			t.Fatalf("ignoreCase: %+v", g)
		}
	})
}

func TestGrepBadRegexRepairsToLiteral(t *testing.T) {
	p := newProject(t, searchTree)
	for _, c := range []struct{ target, repair string }{
		{"/g?path=src&regex=1&include=*.ts&raw=foo(bar", "/g?path=src&include=*.ts&raw=foo(bar"},
		{"/g?regex=true&pattern=a~q(", "/g?pattern=a~q("},
		{"/g?regex=1&ignoreCase=1&raw=[~ut", "/g?ignoreCase=1&raw=%5B~~ut"},
	} {
		e := p.fail(c.target, CodeInvalidRegex)
		if e.Repair != readBase+c.repair || e.Action != fault.ActionFetchRepair {
			t.Fatalf("%s: repair %q", c.target, e.Repair)
		}
		if _, err := p.call(c.repair); err != nil {
			t.Fatalf("repair %s fails: %v", c.repair, err)
		}
	}
}

func TestGrepRefusals(t *testing.T) {
	p := newProject(t, searchTree)
	p.fail("/g", transport.CodeMissingParameter)
	p.fail("/g?pattern=a&raw=b", transport.CodeConflictingContent)
	p.fail("/g?grep=a&query=b", transport.CodeConflictingParams)
	p.fail("/g?regex=maybe&raw=a", transport.CodeInvalidParameter)
	p.fail("/g?raw=a~nb", transport.CodeInvalidParameter)
	p.fail("/g?path=../..&raw=a", "path_traversal")
	p.fail("/g?path=nope&raw=a", "path_not_found")
	if e := p.fail("/g?raw=TODO&include=*.ts", transport.CodeMisplacedControl); e.Repair != readBase+"/g?include=*.ts&raw=TODO" {
		t.Fatalf("misplaced repair %q", e.Repair)
	}
}

func TestFind(t *testing.T) {
	engines(t, searchTree, func(t *testing.T, p *project) {
		var f findResult
		p.ok("/f?name=math", &f)
		if f.Count != 1 || f.Entries[0].Path != "/project/src/util/math.ts" {
			t.Fatalf("%+v", f)
		}
		f = findResult{}
		p.ok("/f?path=src&recursive=1&raw=TODO", &f)
		if f.Count != 2 || f.Entries[0].Line == 0 {
			t.Fatalf("content: %+v", f)
		}
		f = findResult{}
		p.ok("/f?name=.ts&query=a~qb", &f)
		if f.Count != 2 {
			t.Fatalf("name and content: %+v", f)
		}
	})
	p := newProject(t, searchTree)
	p.fail("/f?recursive=0", transport.CodeInvalidParameter)
	p.fail("/f?path=README.md&name=x", CodeNotADirectory)
	p.fail("/f?content=a&raw=b", transport.CodeConflictingContent)
	p.fail("/f?nmae=x", transport.CodeUnknownParameter)
}

// TestSearchStaysInScope: symlinks are not followed by find or grep, so a
// link to outside the project yields nothing from outside.
func TestSearchStaysInScope(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("TOP SECRET\n"), 0o600)
	tree := map[string]string{"a.txt": "SECRET? no\n", "out": "->" + outside, "out.txt": "->" + filepath.Join(outside, "secret.txt")}
	engines(t, tree, func(t *testing.T, p *project) {
		body := p.ok("/g?raw=SECRET", nil)
		if strings.Contains(body, "TOP") || strings.Contains(body, outside) {
			t.Fatalf("%s", body)
		}
		body = p.ok("/f?raw=SECRET", nil)
		if strings.Contains(body, "secret.txt") {
			t.Fatalf("%s", body)
		}
		p.fail("/g?path=out&raw=SECRET", "symlink_escape")
	})
}

// TestCorpusThroughGrep: every one-line corpus text, written to a file and
// searched for literally through its Encode form on the raw tail and as
// pattern=, is found on exactly its line with exactly its text.
func TestCorpusThroughGrep(t *testing.T) {
	cases := corpus.Cases(t)
	tree := map[string]string{}
	var lines []string
	for _, c := range cases {
		if c.Text == "" || strings.ContainsAny(c.Text, "\n\r\x00") || len(c.Text) > 250 {
			continue
		}
		lines = append(lines, c.Text)
	}
	tree["corpus.txt"] = strings.Join(lines, "\n") + "\n"
	engines(t, tree, func(t *testing.T, p *project) {
		for i, text := range lines {
			for _, q := range []string{"raw=" + transport.Encode(text), "pattern=" + transport.Encode(text)} {
				var g grepResult
				body := p.ok("/g?path=corpus.txt&"+q, &g)
				found := false
				for _, m := range g.Matches {
					if m.Line == i+1 && m.Text == text {
						found = true
					}
				}
				if !found {
					t.Fatalf("%q via %s not found on line %d: %s", text, q[:3], i+1, body)
				}
			}
		}
	})
}

// A pattern that Encode makes longer than the agent wrote it ([ is %5B)
// can give a literal search URL over the transport's limits: then no
// repair is offered, since fetched as returned it would be refused.
func TestGrepBadRegexRepairFitsTheTransport(t *testing.T) {
	p := newProject(t, searchTree)
	long := strings.Repeat("[", 4000)
	e := p.fail("/g?regex=1&raw="+long, CodeInvalidRegex)
	if e.Repair != "" || e.Action != fault.ActionCorrectRequest {
		t.Fatalf("repair of %d bytes offered (%s)", len(e.Repair), e.Action)
	}
	short := strings.Repeat("[", 100)
	if e := p.fail("/g?regex=1&raw="+short, CodeInvalidRegex); e.Repair == "" || !transport.Fits(e.Repair) {
		t.Fatalf("no repair for a short pattern: %+v", e)
	}
}
