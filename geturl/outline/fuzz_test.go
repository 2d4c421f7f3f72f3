package outline

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzJS checks the scanner on arbitrary input: it returns (no panic, no
// endless loop: a watchdog fails the input after 5 s, far above the
// microseconds a fuzz input takes) and every line it reports exists.
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
		done := make(chan Outline, 1)
		go func() { done <- JS(src, Options{TypeScript: ts, JSX: jsx}) }()
		var o Outline
		select {
		case o = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("JS did not return on %q", src)
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
	})
}

// FuzzGo checks the Go outliner never panics.
func FuzzGo(f *testing.F) {
	src, _ := os.ReadFile(filepath.Join("testdata", "sample.go"))
	f.Add(src)
	f.Add([]byte("package p; func (x *T[) {}"))
	f.Fuzz(func(t *testing.T, src []byte) {
		Go(src)
	})
}
