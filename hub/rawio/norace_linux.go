//go:build !race

package rawio

import (
	"syscall"
	"unsafe"
)

// sysRead and sysWrite are one read(2) or write(2) on a non-blocking
// descriptor, made without the scheduler's system-call bookkeeping: they
// cannot block. p is not empty.
func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), errno
}

func sysWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), errno
}
