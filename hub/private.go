package hub

import (
	"errors"
	"fmt"
	"io"
	"os"
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

// OpenPrivate opens path with flag and perm without following a symbolic
// link (or, on Windows, any reparse point) and checks the opened file
// itself (no race between check and use): it must be a regular file owned
// by the current user that no other user may write; when secret (it holds
// a key), not read either. On unix "may" is the mode's group and other
// bits; on Windows it is the file's access list, and a file it creates
// gets an owner-only one (see private_windows.go). A FIFO planted in its
// place cannot block the open.
func OpenPrivate(path string, flag int, perm os.FileMode, secret bool) (*os.File, error) {
	f, err := openNoFollow(path, flag, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkPrivate(path, f, fi, secret)
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

// checkPrivate applies the file rules to the file f that an open
// returned: what kind of file it is here, who owns it and who else may
// write or read it in the per-OS checkAccess.
func checkPrivate(path string, f *os.File, fi os.FileInfo, secret bool) error {
	if fi.Mode()&os.ModeSymlink != 0 {
		return linkError(path)
	}
	if !fi.Mode().IsRegular() {
		return &UnsafeFileError{Path: path, Problem: "is not a regular file", Fix: "remove it: rm " + path}
	}
	return checkAccess(path, f, fi, secret)
}

func linkError(path string) error {
	return &UnsafeFileError{Path: path, Problem: "is a symbolic link, which is never followed", Fix: "remove it: rm " + path}
}

// EnsurePrivateDir creates dir (and parents) private to the current
// user and checks the directory itself without following a link: it must
// be a directory owned by the current user that no other user may write
// (anyone who can write it can plant or swap the files in it). One others
// may read is tightened (0700 on unix, an owner-only access list on
// Windows), so a secret never lands in a directory others can list.
func EnsurePrivateDir(dir string) error {
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return dirLinkError(dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := openPrivateDir(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return tightenDir(f)
}

// CheckPrivateDir applies EnsurePrivateDir's rules to an existing dir
// without creating or changing anything (for readers such as `hub
// status`); a missing dir is os.ErrNotExist.
func CheckPrivateDir(dir string) error {
	f, err := openPrivateDir(dir)
	if err != nil {
		return err
	}
	return f.Close()
}

func dirLinkError(dir string) error {
	return &UnsafeFileError{Path: dir, Problem: "is a symbolic link, which is never followed", Fix: "replace it with a directory of your own: rm " + dir}
}
