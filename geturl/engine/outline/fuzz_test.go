package outline

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzJS checks the scanner on arbitrary input, through the full outline
// and the streaming scan of large files: each returns (no panic, no
// endless loop: a watchdog fails the input after 5 s, far above the
// microseconds a fuzz input takes), every line it reports exists and the
// bounds hold.
func FuzzJS(f *testing.F) {
	for _, name := range []string{"tricky.ts", "component.tsx", "common.js"} {
		src, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src, true, true)
	}
	for _, s := range []string{"`${`${", "<a>{<b>{`${/", "/[/", "a = b / c / d", "<T,>(x) => x", "'\\", "/*", "#!", "x?.5:1", "1e+5", "})]}"} {
		f.Add([]byte(s), false, true)
	}
	f.Fuzz(func(t *testing.T, src []byte, ts, jsx bool) {
		opt := Options{TypeScript: ts, JSX: jsx}
		checkOutline(t, src, func() Outline { return JS(src, opt) })
		checkOutline(t, src, func() Outline {
			o := Outline{Lines: countLines(src)}
			jsScan(src, opt, &o)
			return o
		})
	})
}

// checkOutline runs outline under a watchdog and checks its lines and
// bounds.
func checkOutline(t *testing.T, src []byte, outline func() Outline) {
	t.Helper()
	done := make(chan Outline, 1)
	go func() { done <- outline() }()
	var o Outline
	select {
	case o = <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("no outline of %q", src)
	}
	lines := max(o.Lines, 1)
	for _, d := range o.Decls {
		if d.Line < 1 || d.Line > lines || (d.EndLine != 0 && (d.EndLine < d.Line || d.EndLine > lines)) {
			t.Fatalf("decl %+v outside 1..%d", d, lines)
		}
	}
	for _, im := range o.Imports {
		if im.Line < 1 || im.Line > lines {
			t.Fatalf("import %+v outside 1..%d", im, lines)
		}
	}
	if len(o.Decls) > MaxDecls || len(o.Imports) > MaxImports {
		t.Fatal("bounds exceeded")
	}
}

// FuzzGo checks the Go outliner, go/parser's and the streaming scan's,
// never panics, terminates, and reports only lines that exist.
func FuzzGo(f *testing.F) {
	src, _ := os.ReadFile(filepath.Join("testdata", "sample.go"))
	f.Add(src)
	f.Add([]byte("package p; func (x *T[) {}"))
	f.Add([]byte("package p\ntype A[T any, B [2]int] = struct{}\nfunc ((x)) (*T[K,]) M() {}\nvar (a, b = 1\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		Go(src)
		checkOutline(t, src, func() Outline {
			o := Outline{Lines: countLines(src)}
			goScan(src, &o)
			return o
		})
	})
}
