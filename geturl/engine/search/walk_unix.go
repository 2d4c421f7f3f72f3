//go:build unix

package search

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// walkTree visits every entry below the directory host (already resolved
// inside the project) in walk's order. Unlike WalkDir it never goes back
// to the file system by path: each directory is opened relative to its
// parent's descriptor with O_NOFOLLOW, and sizes come from fstatat on
// that descriptor. A directory swapped for a symlink to somewhere else
// while the walk runs is therefore skipped, never listed.
func walkTree(host string, fn func(rel string, e entry) walkAction) (deep bool, err error) {
	fd, err := sandbox.Open(host, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK)
	if err != nil {
		return false, err
	}
	return walk(newFDDir(fd, host), fn), nil
}

// fdDir is a directory open at a descriptor.
type fdDir struct {
	f  *os.File
	fd int
}

func newFDDir(fd int, name string) *fdDir {
	return &fdDir{f: os.NewFile(uintptr(fd), name), fd: fd}
}

func (d *fdDir) list() []entry {
	ds, _ := d.f.ReadDir(-1)
	ents := make([]entry, len(ds))
	for i, de := range ds {
		ents[i] = entry{name: de.Name(), mode: de.Type(), dir: d, listed: -1}
	}
	return ents
}

func (d *fdDir) openDir(name string) (dirHandle, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return newFDDir(fd, name), nil
}

func (d *fdDir) size(name string) int64 {
	var st unix.Stat_t
	if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return -1
	}
	return st.Size
}

func (d *fdDir) close() { d.f.Close() }
