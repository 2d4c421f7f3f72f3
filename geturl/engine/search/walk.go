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
)

// sniffBytes is how much of a file the binary check reads (as git does).
const sniffBytes = 8000

// What a walkTree visitor asks for next.
type walkAction int

const (
	walkOn   walkAction = iota
	walkSkip            // do not descend into this directory
	walkStop
)

// entry is one name found by walkTree, with its type bits
// (fs.FileMode.Type) from the directory listing: a symlink, and on
// Windows any reparse point (symlink, junction, mount point, cloud
// placeholder), is fs.ModeSymlink and never followed.
type entry struct {
	name string
	mode fs.FileMode
	dir  dirHandle // the directory holding it, open while the visitor runs
	// listed is the size the listing gave (Windows); -1 when the listing
	// has none (unix), and size asks dir.
	listed int64
}

// size is the entry's size, from its directory's handle without
// following a link; -1 when it is gone.
func (e entry) size() int64 {
	if e.listed >= 0 {
		return e.listed
	}
	return e.dir.size(e.name)
}

// dirHandle is one directory held open by walkTree, as each OS holds it
// (walk_unix.go, walk_windows.go). The walk never names a path: it lists
// a directory through its handle and opens each child relative to it.
type dirHandle interface {
	// list returns the directory's entries, in any order, without "."
	// and ".."; as many as could be read (an error ends the listing).
	list() []entry
	// openDir opens the directory name relative to this one, never
	// following a link: a name that is (or has become) a symlink or
	// reparse point, or is not a directory, fails.
	openDir(name string) (dirHandle, error)
	// size is name's size, from this directory without following a
	// link; -1 when it is gone.
	size(name string) int64
	close()
}

type walker struct {
	fn   func(rel string, e entry) walkAction
	deep bool
}

// maxDepth bounds how deep walkTree descends: it holds one descriptor per
// level, and a chain of directories built relative to descriptors has no
// PATH_MAX to stop it (a walk by path ends at about 2,000 levels).
const maxDepth = 256

// walk is walkTree's portable part, from the directory root (which it
// closes): depth first, names sorted bytewise (as rg --sort path and
// filepath.WalkDir do), rel slash-separated. Symlinks are reported, not
// followed; a directory that cannot be opened is reported and skipped,
// and so is one more than maxDepth levels down (deep says a walk met
// one).
func walk(root dirHandle, fn func(rel string, e entry) walkAction) (deep bool) {
	w := walker{fn: fn}
	w.dir(root, "", 1)
	return w.deep
}

// dir walks the directory d, at depth, closing it; true means stop.
func (w *walker) dir(d dirHandle, rel string, depth int) bool {
	defer d.close()
	ents := d.list()
	slices.SortFunc(ents, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	for _, e := range ents {
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
		c, err := d.openDir(e.name)
		if err != nil {
			continue // unreadable, or no longer a directory
		}
		if w.dir(c, child, depth+1) {
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
