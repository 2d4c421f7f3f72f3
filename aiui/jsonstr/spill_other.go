//go:build !linux

package jsonstr

import (
	"errors"
	"os"
)

func openTmpfile(string) (*os.File, error) { return nil, errors.New("no O_TMPFILE") }
