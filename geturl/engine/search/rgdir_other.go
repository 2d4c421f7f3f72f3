//go:build !linux && !windows

package search

import (
	"errors"
	"runtime"
)

// rgDir: without /proc/self/fd there is no way to start rg in a directory
// held open, and starting it by path would let a directory renamed for a
// link to outside send it there. So rg is not run on runtime.GOOS; the Go
// engine, which walks by descriptors, answers every search instead
// (Engine "go").
func rgDir(string) (string, func(), error) {
	return "", nil, errors.New("search: rg cannot start in a held directory on " + runtime.GOOS)
}
