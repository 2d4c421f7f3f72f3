package search

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/internal/cputime"
)

// benchTree writes 10,000 source-like files of about 2 KiB in 100
// directories (plus a node_modules that must be skipped); every 200th file
// holds the needle, so a search reads the whole tree.
func benchTree(b *testing.B) *sandbox.Scope {
	b.Helper()
	root := b.TempDir()
	var body strings.Builder
	for i := range 40 {
		fmt.Fprintf(&body, "export function handler%d(req, res) { return res.send(%d) }\n", i, i)
	}
	plain := body.String()
	for d := range 100 {
		dir := filepath.Join(root, "src", fmt.Sprintf("mod%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			text := plain
			if (d*100+f)%200 == 0 {
				text += "// NEEDLE_7f3a marks this file\n"
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%03d.ts", f)), []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	nm := filepath.Join(root, "node_modules", "dep")
	os.MkdirAll(nm, 0o755)
	os.WriteFile(filepath.Join(nm, "index.js"), []byte("NEEDLE_7f3a\n"), 0o644)
	s, err := sandbox.New(root)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkGrep10k greps the 10k-file tree with each engine; cpu-µs/op
// includes rg's own CPU (a waited-for child).
func BenchmarkGrep10k(b *testing.B) {
	scope := benchTree(b)
	engines := map[string]string{"go": ""}
	if rg, err := exec.LookPath("rg"); err == nil {
		engines["rg"] = rg
	}
	for _, name := range []string{"rg", "go"} {
		rg, ok := engines[name]
		if !ok {
			continue
		}
		for _, mode := range []struct {
			name string
			req  GrepRequest
		}{
			{"literal", GrepRequest{Pattern: "NEEDLE_7f3a"}},
			{"regex", GrepRequest{Pattern: `NEEDLE_[0-9a-f]+ marks`, Regex: true}},
		} {
			b.Run(name+"/"+mode.name, func(b *testing.B) {
				s := &Searcher{Scope: scope, RG: rg}
				done := cputime.Start(b)
				for b.Loop() {
					res, err := s.Grep(context.Background(), mode.req)
					if err != nil || len(res.Matches) != 50 || res.Engine != name {
						b.Fatalf("%v: %d matches by %s", err, len(res.Matches), res.Engine)
					}
				}
				done()
			})
		}
	}
}

// BenchmarkFind10k finds by name in the same tree.
func BenchmarkFind10k(b *testing.B) {
	scope := benchTree(b)
	s := &Searcher{Scope: scope}
	done := cputime.Start(b)
	for b.Loop() {
		res, err := s.Find(context.Background(), FindRequest{Name: "file042"})
		if err != nil || len(res.Entries) != 100 {
			b.Fatal(err, len(res.Entries))
		}
	}
	done()
}
