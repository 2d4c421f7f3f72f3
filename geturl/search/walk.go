package search

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hubdev/hub/geturl/sandbox"
)

// sniffBytes is how much of a file the binary check reads (as git does).
const sniffBytes = 8000

// walkFiles calls fn for every regular file under t in depth-first order
// with names sorted bytewise (rg --sort path visits in the same order),
// skipping symlinks, SkipDirs below the start and files include rejects.
// fn returns false to stop. A single-file target is visited alone.
func walkFiles(ctx context.Context, t target, inc *includeSet, fn func(host, rel string, size int64) bool) error {
	if !t.dir {
		fi, err := os.Stat(t.host)
		if err != nil {
			return err
		}
		fn(t.host, "", fi.Size())
		return nil
	}
	return filepath.WalkDir(t.host, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != t.host {
				return filepath.SkipDir
			}
			return nil
		}
		if ctx.Err() != nil {
			return filepath.SkipAll
		}
		if p == t.host {
			return nil
		}
		switch {
		case d.IsDir():
			if skipSet[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		case !d.Type().IsRegular():
			return nil // symlinks are not followed; devices, FIFOs, sockets are not read
		}
		rel := filepath.ToSlash(p[len(t.host)+1:])
		if !inc.match(rel) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if !fn(p, rel, fi.Size()) {
			return filepath.SkipAll
		}
		return nil
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
