package hub

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSecretStoreModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secrets")
	// An existing directory with loose permissions is tightened.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &SecretStore{Dir: dir}
	if err := s.Write("pairing.json", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	di, _ := os.Stat(dir)
	if di.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", di.Mode().Perm())
	}
	fi, _ := os.Stat(s.Path("pairing.json"))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	got, err := s.Read("pairing.json")
	if err != nil || string(got) != `{"a":1}` {
		t.Fatalf("Read = %q, %v", got, err)
	}
}

func TestWriteFileAtomicNeverTorn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	a := []byte(strings.Repeat("a", 64<<10))
	b := []byte(strings.Repeat("b", 64<<10))
	if err := WriteFileAtomic(path, a, 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			data := a
			if i%2 == 1 {
				data = b
			}
			if err := WriteFileAtomic(path, data, 0o600); err != nil {
				t.Error(err)
				return
			}
		}
		close(stop)
	}()
	for {
		select {
		case <-stop:
			wg.Wait()
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Errorf("temp files left behind: %v", entries)
			}
			return
		default:
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(a) && string(got) != string(b) {
			t.Fatalf("torn read of %d bytes", len(got))
		}
	}
}

func TestWriteFileAtomicFailureLeavesOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteFileAtomic(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	if err := WriteFileAtomic(path, []byte("new"), 0o600); err == nil {
		t.Fatal("write into a read-only dir succeeded")
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("old contents lost: %q", got)
	}
}

func TestRandomTokens(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		tok := RandomToken(32)
		if len(tok) != 43 || strings.ContainsAny(tok, "+/=") {
			t.Fatalf("token %q is not 32 bytes of unpadded base64url", tok)
		}
		if seen[tok] {
			t.Fatal("duplicate token")
		}
		seen[tok] = true
	}
	if h := RandomHex(6); len(h) != 12 || strings.ToUpper(h) != h {
		t.Fatalf("RandomHex(6) = %q", h)
	}
}

func TestSecretEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"tok_abc", "tok_abc", true},
		{"tok_abc", "tok_abd", false},
		{"short", "a much longer secret value", false},
		{"", "", false},
		{"x", "", false},
	}
	for _, tt := range tests {
		if got := SecretEqual(tt.a, tt.b); got != tt.want {
			t.Errorf("SecretEqual(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
	if HashSecret("tok") == "tok" || len(HashSecret("tok")) != 64 || HashSecret("a") == HashSecret("b") {
		t.Error("HashSecret is not a SHA-256 hex digest")
	}
}

func BenchmarkSecretEqual(b *testing.B) {
	x, y := RandomToken(32), RandomToken(32)
	for b.Loop() {
		SecretEqual(x, y)
	}
}

// A writer killed mid-write leaves a 0600 temp copy beside the file; the
// next write of that file removes the stale ones, and leaves a fresh one
// (another writer's, busy) and other files' alone.
func TestWriteFileAtomicSweepsStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hub.json")
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{".hub.json.tmp-111", ".hub.json.tmp-222", ".hub.json.tmp-fresh", ".other.json.tmp-333"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("key"), 0o600); err != nil {
			t.Fatal(err)
		}
		if name != ".hub.json.tmp-fresh" {
			os.Chtimes(p, old, old)
		}
	}
	if err := WriteFileAtomic(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != ".hub.json.tmp-fresh .other.json.tmp-333 hub.json" {
		t.Fatalf("left %s", got)
	}
}
