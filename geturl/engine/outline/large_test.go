package outline

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestScanMatchesFull: on well-formed source the streaming scan finds
// what the full outline finds, line for line (only Scanned, and for Go
// ParseError, tell them apart).
func TestScanMatchesFull(t *testing.T) {
	js := map[string][]byte{"largeTS": largeTS()[:200<<10]}
	for _, name := range []string{"tricky.ts", "component.tsx", "common.js"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		js[name] = b
	}
	for name, src := range js {
		for _, opt := range []Options{{}, {TypeScript: true}, {JSX: true}, {TypeScript: true, JSX: true}} {
			full := JS(src, opt)
			scan := Outline{Language: full.Language, Lines: full.Lines, Imports: []Import{}, Decls: []Decl{}}
			jsScan(src, opt, &scan)
			if !scan.Scanned {
				t.Fatalf("%s: Scanned not set", name)
			}
			scan.Scanned = false
			if a, b := mustJSON(t, full), mustJSON(t, scan); a != b {
				t.Errorf("%s %+v:\nfull %s\nscan %s", name, opt, a, b)
			}
		}
	}
	sample, err := os.ReadFile(filepath.Join("testdata", "sample.go"))
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.ReadFile("goscan.go")
	for name, src := range map[string][]byte{"sample.go": sample, "goscan.go": self, "generated": generatedGo(200 << 10),
		"receivers": []byte("package p\nfunc (x *T[K, V]) A() {}\nfunc (T) B() {}\nfunc ((*T)) C() {}\nfunc (x T[[]int]) D() {}\nfunc () E() {}\n" +
			"type A [N]int\ntype B[T any] struct{}\ntype C[T any] = B[T]\ntype D func()\nvar (\n\tx, _, y = 1, 2,\n\t\t3\n)\nconst (\n\tP = iota\n\tQ\n)\n")} {
		full, err := Go(src)
		if err != nil {
			t.Fatal(name, err)
		}
		scan := Outline{Language: "go", Lines: full.Lines, Imports: []Import{}, Decls: []Decl{}}
		if err := goScan(src, &scan); err != nil {
			t.Fatal(name, err)
		}
		if !scan.Scanned {
			t.Fatalf("%s: Scanned not set", name)
		}
		scan.Scanned = false
		if a, b := mustJSON(t, full), mustJSON(t, scan); a != b {
			t.Errorf("%s:\nfull %s\nscan %s", name, a, b)
		}
	}
	for _, src := range []string{"", "// nothing\n", "func main() {}\n", "package\n"} {
		var o Outline
		if err := goScan([]byte(src), &o); err != ErrNotGo {
			t.Errorf("%q: %v, want ErrNotGo", src, err)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// allocated is the bytes fn allocates on the heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLargeSourceMemory: outlining a 2 MiB source costs less memory than
// the source itself, whatever its shape: a generated Go file, a minified
// bundle, hand-written TypeScript, one endless statement. (The full
// outline cost 17 times the source for the Go file and 63 times for the
// bundle, so eight concurrent requests took the hub from 318 MiB to
// 942 MiB.) Each is still outlined, past MaxParseBytes by the scan.
func TestLargeSourceMemory(t *testing.T) {
	ts := largeTS()
	ts = append(ts, ts...)
	endless := []byte("export const table = [" + strings.Repeat("1,", 900<<10) + "];\nexport function after() {}\n")
	for _, c := range []struct {
		name  string
		src   []byte
		decls int
	}{
		{"generated.go", generatedGo(2 << 20), 500},
		{"bundle.js", bundledJS(2 << 20), 0},
		{"large.ts", ts[:2<<20], 500},
		{"endless.ts", endless, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o Outline
			var err error
			n := allocated(func() { o, err = File(c.name, c.src) })
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d bytes of source: %d bytes allocated (%.2f×), %d declarations", len(c.src), n, float64(n)/float64(len(c.src)), len(o.Decls))
			if n > uint64(len(c.src)) {
				t.Errorf("%d bytes allocated to outline %d bytes of source", n, len(c.src))
			}
			if !o.Scanned || len(o.Decls) < c.decls || o.Lines == 0 {
				t.Errorf("outline: scanned=%v, %d declarations (want %d), %d lines", o.Scanned, len(o.Decls), c.decls, o.Lines)
			}
		})
	}
}

// TestScanBounds: the scan keeps the outline's bounds and says when one
// cut it; a statement longer than the scan keeps still ends where it ends.
func TestScanBounds(t *testing.T) {
	var b bytes.Buffer
	for b.Len() <= MaxParseBytes {
		b.WriteString("export function f() { return require('./m') }\n")
	}
	o, _ := File("a.js", b.Bytes())
	if !o.Scanned || len(o.Decls) != MaxDecls || len(o.Imports) != MaxImports || !o.Truncated {
		t.Fatalf("scanned=%v decls=%d imports=%d truncated=%v", o.Scanned, len(o.Decls), len(o.Imports), o.Truncated)
	}
	// A class body past the statement bound: its members past it are
	// lost (Truncated), the class still ends where it ends.
	long := "export class Big {\n" + strings.Repeat("  a = 1;\n", maxStmtTokens/4) + "  last() {}\n}\nexport function g() {}\n"
	long += strings.Repeat("// filler\n", MaxParseBytes/10)
	o, _ = File("a.ts", []byte(long))
	if !o.Scanned || !o.Truncated || len(o.Decls) != 2 || o.Decls[0].EndLine != maxStmtTokens/4+3 || o.Decls[1].Name != "g" {
		t.Fatalf("long class: %+v", o)
	}
	// A function body is not kept at all, however long: nothing is cut.
	long = "export function main() {\n" + strings.Repeat("  call(a, b);\n", 2*maxStmtTokens) + "}\nclass C {\n  m() {}\n}\n"
	o, _ = File("a.ts", []byte(long))
	want := []Decl{{Line: 1, EndLine: 2*maxStmtTokens + 2, Kind: "function", Name: "main", Exported: true},
		{Line: 2*maxStmtTokens + 3, EndLine: 2*maxStmtTokens + 5, Kind: "class", Name: "C"},
		{Line: 2*maxStmtTokens + 4, EndLine: 2*maxStmtTokens + 4, Kind: "method", Name: "m", Parent: "C"}}
	if !o.Scanned || o.Truncated || mustJSON(t, o.Decls) != mustJSON(t, want) {
		t.Fatalf("long function: %+v", o)
	}
	var g bytes.Buffer
	g.WriteString("package p\n")
	for g.Len() <= MaxParseBytes {
		g.WriteString("import \"fmt\"\nfunc F() {}\n")
	}
	o, err := File("a.go", g.Bytes())
	if err != nil || !o.Scanned || len(o.Decls) != MaxDecls || len(o.Imports) != MaxImports || !o.Truncated {
		t.Fatalf("go: %v scanned=%v decls=%d imports=%d truncated=%v", err, o.Scanned, len(o.Decls), len(o.Imports), o.Truncated)
	}
}
