//go:build race

package rawio

import (
	"errors"
	"syscall"
)

// Under the race detector sysRead and sysWrite go through the syscall
// package, whose Read and Write tell the detector that bytes written to a
// descriptor happen before the reads that receive them: without that, a
// test whose goroutines talk over a socket would see races that are not
// there. The raw calls (norace_linux.go) are what ships.
func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), p)
	return max(n, 0), errnoOf(err)
}

func sysWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Write(int(fd), p)
	return max(n, 0), errnoOf(err)
}

func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if err != nil && !errors.As(err, &errno) {
		return syscall.EIO
	}
	return errno
}
