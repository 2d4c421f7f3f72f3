package hub

import (
	"errors"
	"syscall"
)

// SyscallConn exposes the TCP connection's descriptor (syscall.Conn), for
// the owner of a hijacked connection: hub/ws reads and writes a WebSocket
// with raw calls on it.
func (c *limitedConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}
