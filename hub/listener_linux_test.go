package hub

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// TestWalkStopsAtUnlistedSocket: a socket bound to a port but not
// listening blocks our bind yet is absent from the kernel's socket table,
// so whose it is cannot be shown. Another user could start it listening
// once we had walked on, so the walk stops there too.
func TestWalkStopsAtUnlistedSocket(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	port := sa.(*syscall.SockaddrInet4).Port
	ln, _, err := Listen([]int{port, 0})
	if ln != nil {
		ln.Close()
	}
	var he *HeldError
	if !errors.As(err, &he) || he.Port != port || he.Owner != nil || !strings.Contains(err.Error(), "does not list") {
		t.Fatalf("err = %v, want a HeldError for %d with no owner", err, port)
	}
}
