package jsonstr

import (
	"os"
	"syscall"
)

// openTmpfile opens an unnamed file in dir (O_TMPFILE: __O_TMPFILE is
// 0x400000 on every architecture Go supports, O_DIRECTORY is not).
func openTmpfile(dir string) (*os.File, error) {
	return os.OpenFile(dir, os.O_RDWR|0x400000|syscall.O_DIRECTORY, 0o600)
}
