//go:build linux

package mutation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/internal/treetest"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/transport"
)

// A directory of the project is swapped, over and over, with a symlink to
// a directory outside it (renameat2 RENAME_EXCHANGE: both names always
// exist, one is the directory and the other the link) while /t, /w, /e
// and /a run on files in it. Whatever each request answers, /t never
// reports the outside file, nothing outside changes, and no temporary or
// backup file of a write is left in the project.
func TestDirectorySwappedForASymlinkMidRequest(t *testing.T) {
	for _, r := range sandbox.Resolvers() {
		t.Run(r.Name(), func(t *testing.T) { directorySwappedMidRequest(t, r) })
	}
}

func directorySwappedMidRequest(t *testing.T, r sandbox.Resolver) {
	const rounds = 150
	outsideBody := strings.Repeat("outside!", 1000) // 8000 bytes: a size nothing inside has
	e := newEnvOn(t, r, rw, mutation.Options{}, nil)
	writeTree(t, e.outside, map[string]string{"f.txt": outsideBody})
	tree := map[string]string{"d/f.txt": "inside\n", "l": "->" + e.outside}
	for i := range rounds {
		tree[fmt.Sprintf("d/e%d.txt", i)] = "before\n"
		tree[fmt.Sprintf("d/p%d.txt", i)] = "before\n"
	}
	writeTree(t, e.root, tree)
	outside := treetest.Snapshot(t, e.outside)

	d, l := filepath.Join(e.root, "d"), filepath.Join(e.root, "l")
	var stop atomic.Bool
	var swaps atomic.Int64
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, l, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				return
			}
			swaps.Add(1)
			// A pause long enough for some requests to get through
			// whole, so the swap lands in every step of them.
			time.Sleep(time.Duration(swaps.Load()%7) * 20 * time.Microsecond)
		}
		// Leave the directory at d.
		if fi, err := os.Lstat(d); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, l, unix.RENAME_EXCHANGE)
		}
	}()

	var wg sync.WaitGroup
	var statOK, statLeaks, mutOK atomic.Int64
	wg.Go(func() {
		for range 3 * rounds {
			_, body := e.fetch(e.r + "/t?path=d/f.txt")
			var a struct {
				OK   bool  `json:"ok"`
				Size int64 `json:"size"`
			}
			json.Unmarshal([]byte(body), &a)
			if a.OK {
				statOK.Add(1)
				if a.Size == int64(len(outsideBody)) || a.Size != int64(len("inside\n")) {
					statLeaks.Add(1)
				}
			}
		}
	})
	enc := transport.Encode
	wg.Go(func() {
		for i := range rounds {
			for _, u := range []string{
				e.m + fmt.Sprintf("/w?path=d/w%d.txt&wait=1500&raw=new", i),
				e.m + fmt.Sprintf("/e?path=d/e%d.txt&old=before&new=after&wait=1500", i),
				e.m + "/a?wait=1500&raw=" + enc(fmt.Sprintf("*** Begin Patch\n*** Update File: d/p%d.txt\n@@\n-before\n+after\n*** Add File: d/q%d.txt\n+added\n*** End Patch\n", i, i)),
			} {
				if _, body := e.fetch(u); strings.Contains(body, `"state":"succeeded"`) {
					mutOK.Add(1)
				}
			}
		}
	})
	wg.Wait()
	stop.Store(true)
	<-swapped
	ctx, cancel := context.WithTimeout(context.Background(), 30e9)
	defer cancel()
	if err := e.host.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d swaps; /t answered ok %d of %d; %d of %d mutations succeeded", swaps.Load(), statOK.Load(), 3*rounds, mutOK.Load(), 3*rounds)

	if n := statLeaks.Load(); n > 0 {
		t.Errorf("/t reported the size of the file outside the project in %d answers", n)
	}
	treetest.Same(t, "outside the project", outside, treetest.Snapshot(t, e.outside))
	var left []string
	filepath.WalkDir(e.root, func(p string, de fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(de.Name(), ".geturl-") {
			left = append(left, strings.TrimPrefix(p, e.root+"/"))
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("%d temporary or backup files left in the project, e.g. %s", len(left), left[0])
	}
}
