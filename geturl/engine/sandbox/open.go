package sandbox

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Open opens host, a realpath Resolve or ResolveExisting returned, with
// flags (O_CLOEXEC and O_NOFOLLOW are added), refusing a symlink in any
// component of it. A realpath holds no symlink, so one found there was
// swapped in after the check, a directory renamed for a link to outside
// the project; openat2's RESOLVE_NO_SYMLINKS makes check and open one
// step in the kernel, so the open cannot follow it. Such an open fails
// with an *Error of ErrSymlinkEscape; other errors are the OS's.
//
// Kernels before 5.6 have no openat2 (ENOSYS), and an older container
// seccomp profile refuses it (EPERM, which openat2 itself does not return
// for a path): there only the last component is guarded (O_NOFOLLOW).
func Open(host string, flags int) (int, error) {
	flags |= syscall.O_CLOEXEC | syscall.O_NOFOLLOW
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	for {
		fd, err := unix.Openat2(unix.AT_FDCWD, host, &how)
		if err == unix.ENOSYS || err == unix.EPERM {
			fd, err = syscall.Open(host, flags, 0)
		}
		switch err {
		case nil:
			return fd, nil
		case syscall.EINTR:
			continue
		case syscall.ELOOP:
			return -1, newErr(ErrSymlinkEscape)
		}
		return -1, err
	}
}
