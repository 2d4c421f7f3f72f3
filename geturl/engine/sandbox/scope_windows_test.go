package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// On Windows the sandbox exists: New makes a scope judging paths by
// Windows' rules, and its resolver opens what it resolves. (Built and
// vetted on Linux; run on Windows only.)
func TestWindowsScope(t *testing.T) {
	if err := Supported(); err != nil {
		t.Fatalf("Supported: %v", err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "src", "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := New(root)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if !sc.rules.windows {
		t.Fatal("the scope judges by unix rules")
	}
	for _, in := range []string{`src\main.go`, "/project/src/main.go", strings.ToLower(sc.Root()) + `\src\main.go`} {
		p, err := sc.ResolveExisting(in)
		if err != nil || p.Virtual != "/project/src/main.go" {
			t.Fatalf("ResolveExisting(%q) = %+v, %v", in, p, err)
		}
		fd, err := sc.Open(p.Host, syscall.O_RDONLY)
		if err != nil {
			t.Fatalf("Open(%q): %v", in, err)
		}
		syscall.CloseHandle(fd)
	}
	for in, want := range map[string]error{`..\x`: ErrTraversal, "nul": ErrReservedName, `\\?\C:\x`: ErrOutsideScope} {
		if _, err := sc.ResolveNew(in); !errors.Is(err, want) {
			t.Errorf("ResolveNew(%q): %v, want %v", in, err, want)
		}
	}
}

// A junction (mklink /J) on the path is a reparse point: resolving
// through it and opening through it are refused, even to inside the
// project. A symlink is refused by the resolver too, where this user may
// make one.
func TestWindowsReparsePointsRefused(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	junction := filepath.Join(root, "j")
	if out, err := exec.Command("cmd", "/d", "/c", "mklink", "/J", junction, outside).CombinedOutput(); err != nil {
		t.Skipf("mklink /J: %v: %s", err, out)
	}
	sc, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{`j\secret.txt`, "j", `j\new.txt`} {
		if p, err := sc.ResolveNew(in); !errors.Is(err, ErrSymlinkEscape) {
			t.Errorf("ResolveNew(%q) = %+v, %v; want symlink_escape", in, p, err)
		}
	}
	if fd, err := sc.Open(filepath.Join(sc.Root(), "j", "secret.txt"), syscall.O_RDONLY); !errors.Is(err, ErrSymlinkEscape) {
		if err == nil {
			syscall.CloseHandle(fd)
		}
		t.Errorf("Open through the junction: %v, want symlink_escape", err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "l")); err != nil {
		t.Logf("no symlink privilege: %v", err)
		return
	}
	if fd, err := sc.Open(filepath.Join(sc.Root(), "l", "secret.txt"), syscall.O_RDONLY); !errors.Is(err, ErrSymlinkEscape) {
		if err == nil {
			syscall.CloseHandle(fd)
		}
		t.Errorf("Open through the symlink: %v, want symlink_escape", err)
	}
}
