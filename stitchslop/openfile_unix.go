//go:build unix

package stitchslop

import (
	"os"
	"syscall"
)

// openNoFollow opens path for reading, refusing a symbolic link in its
// last element, and without blocking on a FIFO swapped in for the file.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
