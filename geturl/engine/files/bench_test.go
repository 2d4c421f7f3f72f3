package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/internal/cputime"
)

// benchTree writes n source-like files of size bytes under src/ and returns
// a Reader on it.
func benchTree(b *testing.B, n, size int) *Reader {
	b.Helper()
	root := b.TempDir()
	line := "\tif err := doSomething(ctx, value); err != nil { return err }\n"
	body := strings.Repeat(line, size/len(line)+1)[:size]
	for i := range n {
		p := filepath.Join(root, "src", fmt.Sprintf("file%d.go", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s, err := sandbox.New(root)
	if err != nil {
		b.Fatal(err)
	}
	return NewReader(s)
}

// BenchmarkRead4KiB is one /r of one 4 KiB file through this package
// (resolve, open, read, hash, cut). The target for the whole /r route is
// 100 µs of server CPU.
func BenchmarkRead4KiB(b *testing.B) {
	r := benchTree(b, 1, 4096)
	targets := []Target{{Path: "src/file0.go"}}
	b.ReportAllocs()
	b.SetBytes(4096)
	done := cputime.Start(b)
	for b.Loop() {
		res, err := r.Read(targets)
		if err != nil || !res.AllComplete {
			b.Fatal(err, res.Files[0].Error)
		}
	}
	done()
}

// BenchmarkRead8Files is one /r of eight 4 KiB files sharing the allowance.
func BenchmarkRead8Files(b *testing.B) {
	r := benchTree(b, 8, 4096)
	targets := make([]Target, 8)
	for i := range targets {
		targets[i].Path = fmt.Sprintf("/project/src/file%d.go", i)
	}
	b.ReportAllocs()
	b.SetBytes(8 * 4096)
	done := cputime.Start(b)
	for b.Loop() {
		if _, err := r.Read(targets); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

// BenchmarkStat is one /t of a file.
func BenchmarkStat(b *testing.B) {
	r := benchTree(b, 1, 100)
	b.ReportAllocs()
	done := cputime.Start(b)
	for b.Loop() {
		if _, err := r.Stat("src/file0.go"); err != nil {
			b.Fatal(err)
		}
	}
	done()
}
