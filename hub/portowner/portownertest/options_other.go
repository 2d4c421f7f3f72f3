//go:build !linux

package portownertest

import (
	"errors"
	"syscall"
)

const haveOptions = false

var errNoOptions = errors.New("TCP_DEFER_ACCEPT and SO_BINDTODEVICE are Linux's")

func setDeferAccept(syscall.RawConn) error       { return errNoOptions }
func bindToDevice(syscall.RawConn, string) error { return errNoOptions }
