//go:build unix

package hub

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ownerUID is the uid private files must belong to; tests that cannot
// chown (not root) replace it to exercise the owner check.
var ownerUID = os.Geteuid

// openNoFollow opens path with O_NOFOLLOW (a link is refused, never
// followed) and O_NONBLOCK (a FIFO nobody writes cannot block the open).
func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, perm)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return nil, linkError(path)
	case errors.Is(err, syscall.ENXIO): // a FIFO nobody reads, opened for writing
		return nil, &UnsafeFileError{Path: path, Problem: "is not a regular file", Fix: "remove it: rm " + path}
	}
	return f, err
}

// checkAccess: owned by us, not writable by group or others, and when
// secret not readable by them either.
func checkAccess(path string, _ *os.File, fi os.FileInfo, secret bool) error {
	if err := checkOwner(path, fi); err != nil {
		return err
	}
	perm := fi.Mode().Perm()
	switch {
	case perm&0o022 != 0:
		return &UnsafeFileError{Path: path, Problem: fmt.Sprintf("is mode %04o; other users could change it, so it must not be group- or world-writable", perm), Fix: "chmod 600 " + path}
	case secret && perm&0o077 != 0:
		return &UnsafeFileError{Path: path, Problem: fmt.Sprintf("is mode %04o; it holds a key, so it must be 0600", perm), Fix: "chmod 600 " + path + ", and restart what wrote it if the key may have leaked"}
	}
	return nil
}

func checkOwner(path string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if me := ownerUID(); int(st.Uid) != me {
		return &UnsafeFileError{Path: path, Problem: fmt.Sprintf("is owned by uid %d, not by you (uid %d)", st.Uid, me), Fix: "remove it, or chown it to yourself if you made it"}
	}
	return nil
}

// openPrivateDir opens dir without following a link and checks its owner
// and mode on the open descriptor.
func openPrivateDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return nil, dirLinkError(dir)
	case errors.Is(err, syscall.ENOTDIR):
		// dir itself is a file (a component above it being one is the
		// caller's plain path error).
		// (O_NOFOLLOW with O_DIRECTORY reports a link as ENOTDIR.)
		if fi, lerr := os.Lstat(dir); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return nil, dirLinkError(dir)
		} else if lerr == nil && !fi.IsDir() {
			return nil, &UnsafeFileError{Path: dir, Problem: "is not a directory", Fix: "remove it: rm " + dir}
		}
		return nil, err
	case err != nil:
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkOwner(dir, fi)
	}
	if err == nil {
		if perm := fi.Mode().Perm(); perm&0o022 != 0 {
			err = &UnsafeFileError{Path: dir, Problem: fmt.Sprintf("is mode %04o; other users could plant or replace files in it", perm), Fix: "chmod 700 " + dir}
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// tightenDir makes a checked directory 0700 when others could read it.
func tightenDir(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Mode().Perm() != 0o700 {
		return f.Chmod(0o700)
	}
	return nil
}
