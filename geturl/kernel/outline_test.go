package kernel

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/transport"
)

func TestOutline(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "evil.ts"), []byte("export function secretThing() {}\n"), 0o644)
	p := newProject(t, map[string]string{
		"src/app.tsx": "import React from 'react';\nimport { a } from \"./a\";\n\nexport function App() {\n  const s = `${'}'}`;\n  return <div>{'}'}</div>;\n}\n\nexport class Store {\n  get(k: string) { return k; }\n}\n",
		"main.go":     "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(1) }\n\ntype T struct{}\n\nfunc (T) M() {}\n",
		"notes.py":    "def f(): pass\n",
		"stub.go":     "// TODO\n",
		"link.ts":     "->" + filepath.Join(outside, "evil.ts"),
		"dir/":        "",
	})
	var o struct {
		OK       bool   `json:"ok"`
		Path     string `json:"path"`
		Language string `json:"language"`
		Imports  []struct {
			Line   int    `json:"line"`
			Module string `json:"module"`
		} `json:"imports"`
		Decls []struct {
			Line   int    `json:"line"`
			Kind   string `json:"kind"`
			Name   string `json:"name"`
			Parent string `json:"parent"`
		} `json:"declarations"`
	}
	p.ok("/o?path=src/app.tsx", &o)
	if o.Path != "/project/src/app.tsx" || len(o.Imports) != 2 || o.Imports[1].Module != "./a" {
		t.Fatalf("%+v", o)
	}
	names := []string{}
	for _, d := range o.Decls {
		names = append(names, d.Kind+":"+d.Name+"@"+strconv.Itoa(d.Line))
	}
	joined := strings.Join(names, " ")
	if !strings.Contains(joined, "function:App@4") || !strings.Contains(joined, "class:Store@9") || !strings.Contains(joined, "method:get@10") {
		t.Fatalf("declarations %s", joined)
	}
	o.Decls = nil
	p.ok("/o?file=main.go", &o)
	if o.Language == "" || len(o.Decls) < 3 {
		t.Fatalf("go: %+v", o)
	}
	if e := p.fail("/o?path=notes.py", CodeUnsupportedLanguage); e.Repair != readBase+"/r?path=/project/notes.py" {
		t.Fatalf("repair %q", e.Repair)
	}
	// A .go file go/parser finds no package clause in was read fine: it
	// is not a read failure, and /r shows it.
	if e := p.fail("/o?path=stub.go", CodeUnsupportedLanguage); e.Repair != readBase+"/r?path=/project/stub.go" || !e.Retryable {
		t.Fatalf("go file without a package clause: %+v", e)
	}
	p.fail("/o?path=dir", CodeNotAFile)
	p.fail("/o?path=link.ts", "symlink_escape")
	p.fail("/o?path=../x.ts", "path_traversal")
	p.fail("/o", transport.CodeMissingParameter)
}
