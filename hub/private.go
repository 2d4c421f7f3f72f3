package hub

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Private files are checked the way ssh checks its keys: a state or key
// file another local user could plant, replace or read is refused, not
// used. Another user who can write the state dir (or who got a symlink in
// where a file should be) could otherwise make `hub stop` signal a victim
// pid, make root append to a file of theirs, or read a control key.

// ErrUnsafeFile is wrapped by every refusal of a file or directory that
// is not private.
var ErrUnsafeFile = errors.New("unsafe file")

// UnsafeFileError says which file was refused, why, and how to fix it.
type UnsafeFileError struct {
	Path    string
	Problem string // "is a symbolic link", "is mode 0644; it holds a key, …"
	Fix     string // "chmod 600 /path"
}

func (e *UnsafeFileError) Error() string {
	return fmt.Sprintf("%s %s (%s)", e.Path, e.Problem, e.Fix)
}

func (e *UnsafeFileError) Unwrap() error { return ErrUnsafeFile }

// ownerUID is the uid private files must belong to; tests that cannot
// chown (not root) replace it to exercise the owner check.
var ownerUID = os.Geteuid

// OpenPrivate opens path with flag and perm without following a symbolic
// link and checks the opened file itself (no race between check and use):
// it must be a regular file owned by the current user and not writable by
// group or others; when secret (it holds a key), not readable by them
// either. A FIFO planted in its place cannot block the open.
func OpenPrivate(path string, flag int, perm os.FileMode, secret bool) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, perm)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &UnsafeFileError{Path: path, Problem: "is a symbolic link, which is never followed", Fix: "remove it: rm " + path}
		}
		if errors.Is(err, syscall.ENXIO) { // a FIFO nobody reads, opened for writing
			return nil, &UnsafeFileError{Path: path, Problem: "is not a regular file", Fix: "remove it: rm " + path}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkPrivate(path, fi, secret)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadPrivateFile reads a key file of at most limit bytes through
// OpenPrivate (secret): the hub's hub.json, a bridge's session or control
// file, a stored credential.
func ReadPrivateFile(path string, limit int64) ([]byte, error) { return readChecked(path, limit, true) }

// ReadOwnFile reads a file of at most limit bytes through OpenPrivate (not
// secret): one others may read but only this user may change, such as a
// registry saying what an agent may write.
func ReadOwnFile(path string, limit int64) ([]byte, error) { return readChecked(path, limit, false) }

func readChecked(path string, limit int64, secret bool) ([]byte, error) {
	f, err := OpenPrivate(path, os.O_RDONLY, 0, secret)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}

// checkPrivate applies the file rules to what an open or Lstat returned.
func checkPrivate(path string, fi os.FileInfo, secret bool) error {
	if fi.Mode()&os.ModeSymlink != 0 {
		return &UnsafeFileError{Path: path, Problem: "is a symbolic link, which is never followed", Fix: "remove it: rm " + path}
	}
	if !fi.Mode().IsRegular() {
		return &UnsafeFileError{Path: path, Problem: "is not a regular file", Fix: "remove it: rm " + path}
	}
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

// EnsurePrivateDir creates dir (and parents) with mode 0700 and checks the
// directory itself without following a link: it must be a directory owned
// by the current user and not writable by group or others (anyone who can
// write it can plant or swap the files in it). One readable by others is
// tightened to 0700, so a secret never lands in a directory others can
// list.
func EnsurePrivateDir(dir string) error {
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return dirLinkError(dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, fi, err := openPrivateDir(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi.Mode().Perm() != 0o700 {
		return f.Chmod(0o700)
	}
	return nil
}

// CheckPrivateDir applies EnsurePrivateDir's rules to an existing dir
// without creating or changing anything (for readers such as `hub
// status`); a missing dir is os.ErrNotExist.
func CheckPrivateDir(dir string) error {
	f, _, err := openPrivateDir(dir)
	if err != nil {
		return err
	}
	return f.Close()
}

// openPrivateDir opens dir without following a link and checks its owner
// and mode on the open descriptor.
func openPrivateDir(dir string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return nil, nil, dirLinkError(dir)
	case errors.Is(err, syscall.ENOTDIR):
		// dir itself is a file (a component above it being one is the
		// caller's plain path error).
		// (O_NOFOLLOW with O_DIRECTORY reports a link as ENOTDIR.)
		if fi, lerr := os.Lstat(dir); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return nil, nil, dirLinkError(dir)
		} else if lerr == nil && !fi.IsDir() {
			return nil, nil, &UnsafeFileError{Path: dir, Problem: "is not a directory", Fix: "remove it: rm " + dir}
		}
		return nil, nil, err
	case err != nil:
		return nil, nil, err
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
		return nil, nil, err
	}
	return f, fi, nil
}

func dirLinkError(dir string) error {
	return &UnsafeFileError{Path: dir, Problem: "is a symbolic link, which is never followed", Fix: "replace it with a directory of your own: rm " + dir}
}
