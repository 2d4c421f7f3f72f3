//go:build unix

package search

import (
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// entry is one name found by walkTree, with its type bits
// (fs.FileMode.Type) from the directory listing.
type entry struct {
	name  string
	mode  fs.FileMode
	dirfd int // the directory holding it, open while the visitor runs
}

// size is the entry's size, from fstatat on its directory without
// following a symlink; -1 when it is gone.
func (e entry) size() int64 {
	var st unix.Stat_t
	if unix.Fstatat(e.dirfd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return -1
	}
	return st.Size
}

// walkTree visits every entry below the directory host (already resolved
// inside the project), depth first, names sorted bytewise (as rg --sort
// path and filepath.WalkDir do); rel is slash-separated. Unlike WalkDir it
// never goes back to the file system by path: each directory is opened
// relative to its parent's descriptor with O_NOFOLLOW, and sizes come from
// fstatat on that descriptor. A directory swapped for a symlink to
// somewhere else while the walk runs is therefore skipped, never listed.
// Symlinks are reported, not followed; unreadable directories are skipped,
// and so are directories more than maxDepth levels down (deep says a walk
// met one).
func walkTree(host string, fn func(rel string, e entry) walkAction) (deep bool, err error) {
	fd, err := sandbox.Open(host, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK)
	if err != nil {
		return false, err
	}
	w := walker{fn: fn}
	w.dir(fd, "", 1)
	return w.deep, nil
}

// dir walks the directory open at fd, at depth, closing it; true means
// stop.
func (w *walker) dir(fd int, rel string, depth int) bool {
	dir := os.NewFile(uintptr(fd), rel)
	defer dir.Close()
	ents, _ := dir.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, d := range ents {
		e := entry{name: d.Name(), mode: d.Type(), dirfd: fd}
		child := e.name
		if rel != "" {
			child = rel + "/" + e.name
		}
		switch w.fn(child, e) {
		case walkStop:
			return true
		case walkSkip:
			continue
		}
		if !e.mode.IsDir() {
			continue
		}
		if depth == maxDepth {
			w.deep = true
			continue
		}
		cfd, err := unix.Openat(fd, e.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // unreadable, or no longer a directory
		}
		if w.dir(cfd, child, depth+1) {
			return true
		}
	}
	return false
}
