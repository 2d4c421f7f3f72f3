package portownertest

import "syscall"

const canDeferAccept = true

// setDeferAccept sets TCP_DEFER_ACCEPT (5 seconds) on a listener: a
// net.ListenConfig's Control.
func setDeferAccept(_, _ string, rc syscall.RawConn) error {
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_DEFER_ACCEPT, 5)
	}); err != nil {
		return err
	}
	return serr
}
