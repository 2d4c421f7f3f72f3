package sandbox

import (
	"testing"

	"github.com/hubdev/hub/internal/cputime"
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

// BenchmarkResolveMutable resolves what a /w of a new file three levels
// deep resolves for a session without the terminal: ResolveNew plus the
// metadata checks (the names, and the git-directory shape of each
// existing ancestor) and the autorun checks (the names, and the root's
// entries for links named as configuration).
func BenchmarkResolveMutable(b *testing.B) {
	f := newFixture(b)
	b.ReportAllocs()
	done := cputime.Start(b)
	for b.Loop() {
		if _, err := f.scope.ResolveMutable("src/deep/new.txt", Allow{}); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

// BenchmarkVCSComponent judges a typical five-component path.
func BenchmarkVCSComponent(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := VCSComponent("web/src/components/forms/Field.tsx"); ok {
			b.Fatal("metadata")
		}
	}
}

// BenchmarkAutorunComponent judges a typical five-component path.
func BenchmarkAutorunComponent(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := AutorunComponent("web/src/components/forms/Field.tsx"); ok {
			b.Fatal("configuration")
		}
	}
}
