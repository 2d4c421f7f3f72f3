package filechange

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/internal/benchdata"
	"github.com/hubdev/hub/internal/cputime"
)

func benchEngine(b *testing.B, files map[string]string) *Engine {
	b.Helper()
	root := b.TempDir()
	for name, body := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s, err := sandbox.New(root)
	if err != nil {
		b.Fatal(err)
	}
	return &Engine{Scope: s, Gate: &Gate{}}
}

// BenchmarkApplyPatch20Hunks5Files is one /a at the engine level: parse,
// resolve 5 paths, read 5 files of ~10 KiB, locate 20 hunks, and commit
// with rollback capability (hard-link backups, temp file + fsync + rename
// per file, directory fsync, backups removed), on real files.
func BenchmarkApplyPatch20Hunks5Files(b *testing.B) {
	tree := map[string]string{}
	for f := range 5 {
		tree[fmt.Sprintf("src/file%d.go", f)] = benchdata.Source(f, 32)
	}
	e := benchEngine(b, tree)
	patches := [2]string{benchdata.Patch(false), benchdata.Patch(true)}
	ctx := context.Background()
	written := 0
	done := cputime.Start(b)
	for i := 0; b.Loop(); i++ {
		r, err := e.ApplyPatch(ctx, patches[i%2])
		if err != nil {
			b.Fatal(body(b, err))
		}
		if r.Hunks != 20 {
			b.Fatalf("%d hunks", r.Hunks)
		}
		written += r.BytesWritten
	}
	done()
	b.ReportMetric(float64(written)/float64(b.N), "written-B/op")
}

// BenchmarkEditRoundTrip is one /e at the engine level on a ~10 KiB file:
// resolve, read, find the unique old text, atomic replace (temp file +
// fsync + rename + directory fsync).
func BenchmarkEditRoundTrip(b *testing.B) {
	e := benchEngine(b, map[string]string{"src/file0.go": benchdata.Source(0, 32)})
	pairs := [2][2]string{{`"done 17"`, `"finished 17"`}, {`"finished 17"`, `"done 17"`}}
	ctx := context.Background()
	done := cputime.Start(b)
	for i := 0; b.Loop(); i++ {
		if _, err := e.Edit(ctx, "src/file0.go", pairs[i%2][0], pairs[i%2][1]); err != nil {
			b.Fatal(body(b, err))
		}
	}
	done()
}

// BenchmarkParsePatch20Hunks is the parser alone on the benchmark patch.
func BenchmarkParsePatch20Hunks(b *testing.B) {
	text := benchdata.Patch(false)
	b.SetBytes(int64(len(text)))
	done := cputime.Start(b)
	for b.Loop() {
		if _, err := ParsePatch(text); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

// BenchmarkApplyHunksInMemory is the preflight's matching alone: 4 hunks
// located and applied in one ~10 KiB file, no file system.
func BenchmarkApplyHunksInMemory(b *testing.B) {
	p, err := ParsePatch(benchdata.Patch(false))
	if err != nil {
		b.Fatal(err)
	}
	src := benchdata.Source(0, 32)
	done := cputime.Start(b)
	for b.Loop() {
		m := &matcher{budget: DefaultLimits.MaxMatchWork}
		if _, _, err := applyHunks(m, src, p.Files[0].Hunks); err != nil {
			b.Fatal(err)
		}
	}
	done()
}
