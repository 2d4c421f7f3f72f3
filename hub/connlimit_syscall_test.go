package hub

import (
	"errors"
	"net"
	"testing"
)

// A hijacked connection's new owner reaches the TCP descriptor through the
// listener's wrapper; a connection without one says so.
func TestLimitedConnSyscallConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	tc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if rc, err := (&limitedConn{Conn: tc}).SyscallConn(); err != nil || rc == nil {
		t.Fatalf("SyscallConn of a TCP connection = %v, %v", rc, err)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, err := (&limitedConn{Conn: a}).SyscallConn(); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("SyscallConn of a pipe = %v, want errors.ErrUnsupported", err)
	}
}
