package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// swapTree makes a project whose dir/ holds many files and whose link is a
// symlink to a directory outside holding outside-secret-name.txt, and
// keeps exchanging dir and link (renameat2 RENAME_EXCHANGE) until the test
// ends, so that a walk by path would, now and then, list the outside
// directory as the project's dir/.
func swapTree(t *testing.T) *Searcher {
	t.Helper()
	root, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "outside-secret-name.txt"), []byte("outside content\n"), 0o644)
	os.Mkdir(filepath.Join(root, "dir"), 0o755)
	for i := range 200 {
		os.WriteFile(filepath.Join(root, "dir", fmt.Sprintf("f%03d.txt", i)), []byte("inside content\n"), 0o644)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	scope, err := sandbox.New(root)
	if err != nil {
		t.Fatal(err)
	}
	dir, link := filepath.Join(scope.Root(), "dir"), filepath.Join(scope.Root(), "link")
	if err := unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE: %v", err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE)
			}
		}
	})
	t.Cleanup(func() { close(stop); wg.Wait() })
	return &Searcher{Scope: scope, Limits: testLimits}
}

// TestFindUnderSwapNeverListsOutside: names in a directory outside the
// project never show up, however the swap falls during the walk.
func TestFindUnderSwapNeverListsOutside(t *testing.T) {
	s := swapTree(t)
	for range 400 {
		res, err := s.Find(context.Background(), FindRequest{Name: "secret"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Entries) > 0 {
			t.Fatalf("outside name listed: %+v", res.Entries)
		}
	}
}

// TestGrepUnderSwapNeverReadsOutside: the same for the Go grep's walk.
func TestGrepUnderSwapNeverReadsOutside(t *testing.T) {
	s := swapTree(t)
	s.RG = "" // the built-in walk
	for range 400 {
		res, err := s.Grep(context.Background(), GrepRequest{Pattern: "content"})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Matches {
			if strings.Contains(m.Path, "secret") || strings.Contains(m.Text, "outside") {
				t.Fatalf("outside file read: %+v", m)
			}
		}
	}
}

// TestWalkDepthBounded: a chain of directories deeper than maxDepth (built
// relative to descriptors, past where a path could reach) is walked to
// maxDepth levels and no further, holding at most that many descriptors.
func TestWalkDepthBounded(t *testing.T) {
	root := t.TempDir()
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range maxDepth + 50 {
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	unix.Close(fd)
	deepest := 0
	deep, err := walkTree(root, func(rel string, e entry) walkAction {
		deepest = max(deepest, strings.Count(rel, "/")+1)
		return walkOn
	})
	if err != nil || !deep {
		t.Fatal(deep, err)
	}
	if deepest != maxDepth {
		t.Fatalf("walked %d levels, want %d", deepest, maxDepth)
	}
	scope, err := sandbox.New(root)
	if err != nil {
		t.Fatal(err)
	}
	s := &Searcher{Scope: scope, Limits: testLimits}
	if res, err := s.Find(context.Background(), FindRequest{Name: "nothing-matches"}); err != nil || res.Reason != ReasonMaxDepth || !res.Truncated {
		t.Fatalf("find: %s %v", res.Reason, err)
	}
	if res, err := s.Grep(context.Background(), GrepRequest{Pattern: "x"}); err != nil || res.Reason != ReasonMaxDepth || !res.Truncated {
		t.Fatalf("grep: %s %v", res.Reason, err)
	}
}
