package search

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
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

type walker struct {
	fn   func(rel string, e entry) walkAction
	deep bool
}

// maxDepth bounds how deep walkTree descends: it holds one descriptor per
// level, and a chain of directories built relative to descriptors has no
// PATH_MAX to stop it (a walk by path ends at about 2,000 levels).
const maxDepth = 256

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
