//go:build unix

package sandbox

import (
	"strings"

	"golang.org/x/sys/unix"
)

// FD is an open file descriptor.
type FD = int

// portable resolves in user space what openat2 resolves in the kernel:
// from "/" it opens each directory of the path relative to its parent's
// descriptor with O_NOFOLLOW|O_DIRECTORY, so a component that is (or has
// become) a symlink fails the open instead of being followed, and opens
// the final name the same way with the caller's flags. Every step names
// one component in a directory already held open, so renaming anything
// on the path meanwhile cannot send the walk elsewhere. What the BSDs
// and macOS offer; on Linux it is the fallback for kernels without
// openat2.
type portable struct{}

func (portable) Name() string { return "portable" }

func (portable) Open(host string, flags int) (int, error) {
	flags |= unix.O_CLOEXEC | unix.O_NOFOLLOW
	if !strings.HasPrefix(host, "/") || len(host) > MaxPathBytes {
		return -1, newErr(ErrInvalidPath)
	}
	dir, err := openat(unix.AT_FDCWD, "/", searchFlags|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return -1, err
	}
	rest := strings.TrimLeft(host, "/")
	if rest == "" {
		unix.Close(dir)
		return openat(unix.AT_FDCWD, "/", flags)
	}
	for {
		name, more, last := cutComponent(rest)
		if name == "" || name == "." || name == ".." {
			// Not a realpath: nothing Resolve returns has one.
			unix.Close(dir)
			return -1, newErr(ErrInvalidPath)
		}
		if last {
			fd, err := openat(dir, name, flags)
			if err != nil {
				err = linkOr(dir, name, err)
			}
			unix.Close(dir)
			return fd, err
		}
		next, err := openat(dir, name, searchFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		if err != nil {
			err = linkOr(dir, name, err)
			unix.Close(dir)
			return -1, err
		}
		unix.Close(dir)
		dir, rest = next, more
	}
}

// cutComponent splits the first name off a relative path; last reports
// that it was the only one (a trailing slash keeps it a directory, as
// the open's own O_DIRECTORY would).
func cutComponent(rest string) (name, more string, last bool) {
	name, more, found := strings.Cut(rest, "/")
	more = strings.TrimLeft(more, "/")
	return name, more, !found || more == ""
}

func openat(dir int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// linkOr turns the failure to open name in dir into ErrSymlinkEscape when
// name is a symlink: with O_NOFOLLOW the OSes say so differently (ELOOP
// on Linux and macOS, EMLINK on FreeBSD, ENOTDIR with O_DIRECTORY), so
// the fstatat without following says what is there. Other errors stay the
// OS's.
func linkOr(dir int, name string, err error) error {
	switch err {
	case unix.ELOOP, unix.EMLINK, unix.ENOTDIR:
		var st unix.Stat_t
		if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return newErr(ErrSymlinkEscape)
		}
		if err == unix.ELOOP {
			// Gone or changed again since: it was a link when opened.
			return newErr(ErrSymlinkEscape)
		}
	}
	return err
}
