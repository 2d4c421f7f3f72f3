package search

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"golang.org/x/sys/unix"
)

// sniffBytes is how much of a file the binary check reads (as git does).
const sniffBytes = 8000

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

// What a walkTree visitor asks for next.
type walkAction int

const (
	walkOn   walkAction = iota
	walkSkip            // do not descend into this directory
	walkStop
)

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

type walker struct {
	fn   func(rel string, e entry) walkAction
	deep bool
}

// maxDepth bounds how deep walkTree descends: it holds one descriptor per
// level, and a chain of directories built relative to descriptors has no
// PATH_MAX to stop it (a walk by path ends at about 2,000 levels).
const maxDepth = 256

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

// walkFiles calls fn for every regular file under t (walkTree's order),
// skipping symlinks, SkipDirs below the start and files include rejects.
// fn returns false to stop. A single-file target is visited alone. deep is
// walkTree's.
func walkFiles(ctx context.Context, t target, inc *includeSet, fn func(host, rel string, size int64) bool) (deep bool, err error) {
	if !t.dir {
		fi, err := os.Stat(t.host)
		if err != nil {
			return false, err
		}
		fn(t.host, "", fi.Size())
		return false, nil
	}
	return walkTree(t.host, func(rel string, e entry) walkAction {
		switch {
		case ctx.Err() != nil:
			return walkStop
		case e.mode.IsDir():
			if skipSet[e.name] {
				return walkSkip
			}
			return walkOn
		case !e.mode.IsRegular() || !inc.match(rel):
			return walkOn // symlinks are not followed; devices, FIFOs, sockets are not read
		}
		if size := e.size(); size >= 0 && !fn(filepath.Join(t.host, rel), rel, size) {
			return walkStop
		}
		return walkOn
	})
}

// readText reads a regular file into buf (reused between files). ok is
// false for a file that cannot be read, is binary, or has grown past limit
// since it was listed.
func readText(host string, size, limit int64, buf []byte) (data, newBuf []byte, ok bool) {
	f, err := openFile(host)
	if err != nil {
		return nil, buf, false
	}
	defer f.Close()
	if int64(cap(buf)) < size+1 {
		buf = make([]byte, 0, size+512)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if int64(len(buf)) > limit {
			return nil, buf, false
		}
		if err != nil {
			return nil, buf, false
		}
	}
	if isBinary(buf) {
		return nil, buf, false
	}
	return buf, buf, true
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), sniffBytes)], 0) >= 0
}

// openFile opens a file found under a resolved directory: no FIFO can block
// the open, and a symlink on its path (one swapped in while the walk ran)
// is refused.
func openFile(host string) (*os.File, error) {
	fd, err := sandbox.Open(host, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), host), nil
}
