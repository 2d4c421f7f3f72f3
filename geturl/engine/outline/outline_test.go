package outline

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestGolden outlines each testdata source and compares with its golden
// JSON (go test -update rewrites them; review the diff).
func TestGolden(t *testing.T) {
	for _, name := range []string{"tricky.ts", "component.tsx", "common.js", "sample.go"} {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			o, err := File(name, src)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(o, "", "  ")
			golden := filepath.Join("testdata", name+".golden.json")
			if *update {
				os.WriteFile(golden, append(got, '\n'), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(append(got, '\n'), want) {
				t.Fatalf("outline of %s differs from %s (go test -update):\n%s", name, golden, got)
			}
		})
	}
}

// summary renders an outline compactly for table tests.
func summary(o Outline) string {
	var parts []string
	for _, im := range o.Imports {
		parts = append(parts, fmt.Sprintf("%s:%s@%d", im.Kind, im.Module, im.Line))
	}
	for _, d := range o.Decls {
		s := fmt.Sprintf("%s %s@%d", d.Kind, d.Name, d.Line)
		if d.Parent != "" {
			s = fmt.Sprintf("%s %s.%s@%d", d.Kind, d.Parent, d.Name, d.Line)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func TestJS(t *testing.T) {
	cases := []struct {
		name, src string
		opt       Options
		want      string
	}{
		{"function", "function f() {}\n", Options{}, "function f@1"},
		{"string hides braces", "const a = '{';\nfunction f() {}\n", Options{}, "const a@1; function f@2"},
		{"template nesting", "const a = `${ `${'}'}` }`;\nfunction f() {}\n", Options{}, "const a@1; function f@2"},
		{"template with braces in expr", "const a = `${ {x: 1}.x }`;\nclass C {}\n", Options{}, "const a@1; class C@2"},
		{"regex with brace", "const r = /{/;\nfunction f() {}\n", Options{}, "const r@1; function f@2"},
		{"regex with slash in class", "const r = /[/]{/;\nfunction f() {}\n", Options{}, "const r@1; function f@2"},
		{"regex after if paren", "if (x) /{/.test(y)\nfunction f() {}\n", Options{}, "function f@2"},
		{"division not regex", "const a = b / c / d;\nfunction f() {}\n", Options{}, "const a@1; function f@2"},
		{"division after paren", "const a = (b) / 2; const z = 1 / 3;\nfunction f() {}\n", Options{}, "const a@1; const z@1; function f@2"},
		{"comment hides code", "// function x() {\n/* { */ function f() {}\n", Options{}, "function f@2"},
		{"unterminated string recovers", "const a = 'oops\nfunction f() {}\n", Options{}, "const a@1; function f@2"},
		{"unterminated template", "const a = `never closed\nfunction f() {}\n", Options{}, "const a@1"},
		{"jsx apostrophe", "const e = <p>Don't</p>;\nfunction f() {}\n", Options{JSX: true}, "const e@1; function f@2"},
		{"jsx nested expr", "const e = <p>{a ? <b>{'}'}</b> : null}</p>;\nfunction f() {}\n", Options{JSX: true}, "const e@1; function f@2"},
		{"jsx self closing", "const e = <Foo bar=\"}\" />;\nfunction f() {}\n", Options{JSX: true}, "const e@1; function f@2"},
		{"tsx generic arrow", "const g = <T,>(x: T) => x;\nfunction f() {}\n", Options{JSX: true, TypeScript: true}, "function g@1; function f@2"},
		{"ts type assertion not jsx", "const a = <any>b;\nfunction f() {}\n", Options{TypeScript: true}, "const a@1; function f@2"},
		{"less than not jsx", "const a = b <c;\nfunction f() {}\n", Options{JSX: true}, "const a@1; function f@2"},
		{"asi", "const a = 1\nconst b = 2\nfunction f() {}\n", Options{}, "const a@1; const b@2; function f@3"},
		{"continued line", "const a =\n  function g() {}\nfunction f() {}\n", Options{}, "function a@1; function f@3"},
		{"method chain", "const a = b\n  .c()\nfunction f() {}\n", Options{}, "const a@1; function f@3"},
		{"export default expr", "export default {\n  a: 1,\n};\n", Options{}, "default default@1"},
		{"export default ident", "export default App;\n", Options{}, "default App@1"},
		{"export default class anon", "export default class {}\n", Options{}, "class default@1"},
		{"decorator", "@Component({a: 1})\nexport class C {}\n", Options{TypeScript: true}, "class C@2"},
		{"dynamic import anywhere", "function f() { return import('./x') }\n", Options{}, "dynamic:./x@1; function f@1"},
		{"require escapes", "const a = require('\\x41\\u0042\\u{43}');\n", Options{}, "require:ABC@1; const a@1"},
		{"import meta", "const u = import.meta.url;\n", Options{}, "const u@1"},
		{"class methods", "class A {\n  a() {}\n  static b() {}\n  get c() { return 1 }\n  d = 1;\n  e = () => {};\n}\n", Options{},
			"class A@1; method A.a@2; method A.b@3; method A.c@4; method A.e@6"},
		{"method named get", "class A {\n  get() {}\n  static() {}\n}\n", Options{}, "class A@1; method A.get@2; method A.static@3"},
		{"class in expression", "foo(class X { m() {} });\n", Options{}, ""},
		{"export list marks", "function a() {}\nexport { a };\n", Options{}, "function a@1"},
		{"nothing", "", Options{}, ""},
		{"only junk", "}}}))]]\n{{{((\n", Options{}, ""},
		{"shebang", "#!/usr/bin/env node\nfunction f() {}\n", Options{}, "function f@2"},
		{"private names", "class A { #x = 1; #m() {} }\n", Options{}, "class A@1; method A.#m@1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := JS([]byte(tc.src), tc.opt)
			if got := summary(o); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	o := JS([]byte("function a() {}\nexport { a };\n"), Options{})
	if !o.Decls[0].Exported {
		t.Error("export { a } did not mark a exported")
	}
}

func TestEndLines(t *testing.T) {
	src := "export function f() {\n  return 1;\n}\n\nclass C {\n  m() {\n    x();\n  }\n}\nconst a = {\n  b: 1,\n};\nconst z = 1\n"
	o := JS([]byte(src), Options{})
	want := map[string][2]int{"f": {1, 3}, "C": {5, 9}, "m": {6, 8}, "a": {10, 12}, "z": {13, 13}}
	for _, d := range o.Decls {
		if w, ok := want[d.Name]; ok && (d.Line != w[0] || d.EndLine != w[1]) {
			t.Errorf("%s: lines %d-%d, want %d-%d", d.Name, d.Line, d.EndLine, w[0], w[1])
		}
	}
}

func TestBounds(t *testing.T) {
	var b strings.Builder
	for i := range MaxDecls + 10 {
		fmt.Fprintf(&b, "function f%d() {}\n", i)
	}
	o := JS([]byte(b.String()), Options{})
	if len(o.Decls) != MaxDecls || !o.Truncated {
		t.Fatalf("%d decls, truncated=%v", len(o.Decls), o.Truncated)
	}
	b.Reset()
	for i := range MaxImports + 10 {
		fmt.Fprintf(&b, "import a%d from 'm%d';\n", i, i)
	}
	o = JS([]byte(b.String()), Options{})
	if len(o.Imports) != MaxImports || !o.Truncated {
		t.Fatalf("%d imports, truncated=%v", len(o.Imports), o.Truncated)
	}
	long := "function " + strings.Repeat("x", 1000) + "() {}\n"
	o = JS([]byte(long), Options{})
	if n := len(o.Decls[0].Name); n > MaxNameBytes+len("…") {
		t.Fatalf("name of %d bytes", n)
	}
	deep := strings.Repeat("`${", maxNesting+10) + strings.Repeat("}`", maxNesting+10)
	o = JS([]byte("const a = "+deep+";\nfunction f() {}\n"), Options{})
	if !o.Truncated {
		t.Fatal("nesting bound not reported")
	}
	big := bytes.Repeat([]byte("// filler\n"), MaxSourceBytes/10+10)
	o = JS(big, Options{})
	if !o.Truncated || o.Lines != countLines(big[:MaxSourceBytes]) {
		t.Fatalf("source bound: truncated=%v lines=%d", o.Truncated, o.Lines)
	}
}

func TestFileKinds(t *testing.T) {
	for name, lang := range map[string]string{"a.ts": "typescript", "a.MTS": "typescript", "a.tsx": "typescript",
		"a.js": "javascript", "a.jsx": "javascript", "a.cjs": "javascript", "a.go": "go"} {
		src := "function f() {}\n"
		if lang == "go" {
			src = "package a\nfunc f() {}\n"
		}
		o, err := File(name, []byte(src))
		if err != nil || o.Language != lang || len(o.Decls) != 1 {
			t.Errorf("%s: %+v %v", name, o, err)
		}
	}
	if _, err := File("a.py", nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("python: %v", err)
	}
}

func TestGoErrors(t *testing.T) {
	if _, err := Go([]byte("not go at all")); !errors.Is(err, ErrNotGo) {
		t.Errorf("garbage: %v", err)
	}
	o, err := Go([]byte("package p\n\nfunc ok() {}\n\nfunc broken( {\n"))
	if err != nil || o.ParseError == "" || len(o.Decls) == 0 || o.Decls[0].Name != "ok" {
		t.Errorf("partial: %+v %v", o, err)
	}
}
