//go:build !unix

package stitchslop

import (
	"errors"
	"io/fs"
	"os"
)

// openNoFollow opens path for reading, refusing a symbolic link in its
// last element (checked just before opening: the system has no flag).
func openNoFollow(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err != nil {
		return nil, err
	} else if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("is a symbolic link")}
	}
	return os.Open(path)
}
