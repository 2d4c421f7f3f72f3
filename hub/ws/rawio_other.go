//go:build !linux

package ws

import "net"

func newRawConn(c net.Conn) net.Conn { return c }
