//go:build unix

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// forEachResolver runs a test once per resolver this OS offers, so the
// portable walk is tested on Linux too, not only compiled.
func forEachResolver(t *testing.T, test func(t *testing.T, r Resolver)) {
	for _, r := range Resolvers() {
		t.Run(r.Name(), func(t *testing.T) { test(t, r) })
	}
}

func readFD(t *testing.T, fd FD) string {
	t.Helper()
	f := os.NewFile(uintptr(fd), "opened")
	defer f.Close()
	b := make([]byte, 64)
	n, _ := f.Read(b)
	return string(b[:n])
}

// A directory on a resolved path renamed for a link to outside after the
// check (the race a local process could run): Open refuses the path,
// where a plain open would read the outside file through the link.
func TestOpenRefusesALinkSwappedInAfterResolving(t *testing.T) {
	forEachResolver(t, func(t *testing.T, r Resolver) {
		f := newFixture(t)
		sc, err := NewWith(f.root, r)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Resolver().Name() != r.Name() {
			t.Fatalf("the scope opens with %s, want %s", sc.Resolver().Name(), r.Name())
		}
		if err := os.WriteFile(filepath.Join(f.outside, "x.txt"), []byte("outside"), 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := sc.ResolveExisting("src/deep/x.txt")
		if err != nil {
			t.Fatal(err)
		}
		fd, err := sc.Open(p.Host, syscall.O_RDONLY)
		if err != nil {
			t.Fatalf("the resolved path itself: %v", err)
		}
		if got := readFD(t, fd); got != "x\n" {
			t.Fatalf("read %q through the resolved path", got)
		}

		deep := filepath.Join(f.root, "src", "deep")
		if err := os.Rename(deep, deep+".moved"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(f.outside, deep); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p.Host); err != nil || string(b) != "outside" {
			t.Fatalf("the fixture: a plain open reads %q, %v", b, err)
		}
		fd, err = sc.Open(p.Host, syscall.O_RDONLY)
		if err == nil {
			syscall.Close(fd)
			t.Fatal("opened through a link swapped in after resolving")
		}
		if !errors.Is(err, ErrSymlinkEscape) || Code(err) != "symlink_escape" {
			t.Fatalf("error %v (%q), want symlink_escape", err, Code(err))
		}
		// The directory itself, as a directory, is refused the same way.
		if fd, err := sc.Open(deep, syscall.O_RDONLY|syscall.O_DIRECTORY); !errors.Is(err, ErrSymlinkEscape) {
			if err == nil {
				syscall.Close(fd)
			}
			t.Fatalf("the swapped directory: %v, want symlink_escape", err)
		}
	})
}

// What each resolver answers for the other shapes of path: the same as
// openat2 does, so the portable walk is a drop-in.
func TestOpenCases(t *testing.T) {
	forEachResolver(t, func(t *testing.T, r Resolver) {
		f := newFixture(t)
		cases := []struct {
			name  string
			host  string
			flags int
			ok    bool
			is    error
		}{
			{"a file", filepath.Join(f.root, "a.txt"), syscall.O_RDONLY, true, nil},
			{"a directory", filepath.Join(f.root, "src"), syscall.O_RDONLY | syscall.O_DIRECTORY, true, nil},
			{"the root", f.root, syscall.O_RDONLY | syscall.O_DIRECTORY, true, nil},
			{"the file system root", "/", syscall.O_RDONLY | syscall.O_DIRECTORY, true, nil},
			{"a final-component link", filepath.Join(f.root, "link_in.txt"), syscall.O_RDONLY, false, ErrSymlinkEscape},
			{"a link to a directory as one", filepath.Join(f.root, "dirlink"), syscall.O_RDONLY | syscall.O_DIRECTORY, false, ErrSymlinkEscape},
			{"through a link to outside", filepath.Join(f.root, "dirlink", "secret.txt"), syscall.O_RDONLY, false, ErrSymlinkEscape},
			{"through a link inside", filepath.Join(f.root, "link_abs_in", "main.go"), syscall.O_RDONLY, false, ErrSymlinkEscape},
			{"a dangling link", filepath.Join(f.root, "dangling_out"), syscall.O_RDONLY, false, ErrSymlinkEscape},
			{"a missing file", filepath.Join(f.root, "missing"), syscall.O_RDONLY, false, os.ErrNotExist},
			{"a missing directory", filepath.Join(f.root, "missing", "x"), syscall.O_RDONLY, false, os.ErrNotExist},
			{"a file as a directory", filepath.Join(f.root, "a.txt", "x"), syscall.O_RDONLY, false, syscall.ENOTDIR},
			{"a file opened as a directory", filepath.Join(f.root, "a.txt"), syscall.O_RDONLY | syscall.O_DIRECTORY, false, syscall.ENOTDIR},
		}
		for _, c := range cases {
			fd, err := r.Open(c.host, c.flags)
			if c.ok {
				if err != nil {
					t.Errorf("%s: %v", c.name, err)
				} else {
					syscall.Close(fd)
				}
				continue
			}
			if err == nil {
				syscall.Close(fd)
				t.Errorf("%s: opened", c.name)
				continue
			}
			if !errors.Is(err, c.is) {
				t.Errorf("%s: %v, want %v", c.name, err, c.is)
			}
		}
	})
}

// The portable walk takes only what Resolve returns, absolute realpaths;
// a relative path or one with a dot component is refused, not resolved.
func TestPortableRefusesWhatIsNotARealpath(t *testing.T) {
	f := newFixture(t)
	for _, host := range []string{"a.txt", "", f.root + "/src/../a.txt", f.root + "/./a.txt"} {
		fd, err := portable{}.Open(host, syscall.O_RDONLY)
		if err == nil {
			syscall.Close(fd)
		}
		if !errors.Is(err, ErrInvalidPath) {
			t.Errorf("%q: %v, want invalid_path", host, err)
		}
	}
}

// The race itself, run for real against the portable walk: one goroutine
// keeps swapping a directory on the path for a link to outside and back
// while another opens a file through it. Every open either fails or
// reads the file inside; none reads the outside one.
func TestPortableSymlinkSwapRace(t *testing.T) {
	f := newFixture(t)
	if err := os.WriteFile(filepath.Join(f.outside, "x.txt"), []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(f.root, "src", "deep")
	host := filepath.Join(deep, "x.txt")
	const swaps = 500
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		for i := range swaps {
			moved := deep + ".m" + strconv.Itoa(i%2)
			if err := os.Rename(deep, moved); err != nil {
				t.Error(err)
				return
			}
			if err := os.Symlink(f.outside, deep); err != nil {
				t.Error(err)
				return
			}
			if err := os.Remove(deep); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(moved, deep); err != nil {
				t.Error(err)
				return
			}
		}
	})
	opened, refused := 0, 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		fd, err := portable{}.Open(host, syscall.O_RDONLY)
		if err != nil {
			refused++
			continue
		}
		opened++
		if got := readFD(t, fd); got != "x\n" {
			t.Fatalf("open %d read %q: followed a swapped-in link", opened, got)
		}
	}
	wg.Wait()
	t.Logf("%d swaps: %d opens read the inside file, %d refused", swaps, opened, refused)
}
