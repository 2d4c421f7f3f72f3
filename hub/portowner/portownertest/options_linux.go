package portownertest

import "syscall"

const haveOptions = true

// setDeferAccept sets TCP_DEFER_ACCEPT (5 seconds) on a listener.
func setDeferAccept(rc syscall.RawConn) error {
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_DEFER_ACCEPT, 5)
	}); err != nil {
		return err
	}
	return serr
}

// bindToDevice binds a socket to the network device named dev.
func bindToDevice(rc syscall.RawConn, dev string) error {
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.BindToDevice(int(fd), dev) }); err != nil {
		return err
	}
	return serr
}
