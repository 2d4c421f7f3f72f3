package sandbox

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Resolvers on Linux: openat2, then the portable walk (which the tests run
// every suite against as well).
func Resolvers() []Resolver {
	return []Resolver{openat2{call: unix.Openat2}, portable{}}
}

// openat2 resolves in the kernel: RESOLVE_NO_SYMLINKS refuses a link in
// any component, in the same system call that opens.
type openat2 struct {
	// call is unix.Openat2; tests replace it to play a kernel without it.
	call func(dirfd int, path string, how *unix.OpenHow) (int, error)
}

func (openat2) Name() string { return "openat2" }

// Open: kernels before 5.6 have no openat2 (ENOSYS), and an older
// container seccomp profile refuses it (EPERM, which openat2 itself does
// not return for a path): there the portable walk does the same work one
// component at a time.
func (o openat2) Open(host string, flags int) (int, error) {
	flags |= syscall.O_CLOEXEC | syscall.O_NOFOLLOW
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	for {
		fd, err := o.call(unix.AT_FDCWD, host, &how)
		switch err {
		case nil:
			return fd, nil
		case unix.EINTR:
			continue
		case unix.ENOSYS, unix.EPERM:
			return portable{}.Open(host, flags)
		case unix.ELOOP:
			return -1, newErr(ErrSymlinkEscape)
		case unix.ENOTDIR:
			// O_DIRECTORY on a final link says ENOTDIR, not ELOOP: the
			// link is what is there, and the walk says so alike.
			var st unix.Stat_t
			if unix.Fstatat(unix.AT_FDCWD, host, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				return -1, newErr(ErrSymlinkEscape)
			}
		}
		return -1, err
	}
}

// searchFlags open a directory on the way only to look names up in it:
// O_PATH needs no read permission, as a lookup by path does not.
const searchFlags = unix.O_PATH

// unixOpenHow names unix.OpenHow for the tests' stand-in openat2.
type unixOpenHow = unix.OpenHow
