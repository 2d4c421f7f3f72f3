//go:build !linux

package portownertest

import (
	"errors"
	"syscall"
)

const canDeferAccept = false

// setDeferAccept fails: TCP_DEFER_ACCEPT is Linux's.
func setDeferAccept(_, _ string, _ syscall.RawConn) error {
	return errors.New("no TCP_DEFER_ACCEPT on this system")
}
