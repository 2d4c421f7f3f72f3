package sandbox

import (
	"testing"

	"github.com/hubdev/hub/geturl/internal/cputime"
)

// BenchmarkResolveExisting resolves a three-level path (one component a
// directory symlink chain) the way every read does.
func BenchmarkResolveExisting(b *testing.B) {
	f := newFixture(b)
	b.ReportAllocs()
	done := cputime.Start(b)
	for b.Loop() {
		if _, err := f.scope.ResolveExisting("src/deep/x.txt"); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

// BenchmarkResolveNew resolves a target two levels below an existing
// directory.
func BenchmarkResolveNew(b *testing.B) {
	f := newFixture(b)
	b.ReportAllocs()
	done := cputime.Start(b)
	for b.Loop() {
		if _, err := f.scope.ResolveNew("src/n1/n2/new.txt"); err != nil {
			b.Fatal(err)
		}
	}
	done()
}
