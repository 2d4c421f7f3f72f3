package hub

import (
	"log/slog"
	"net"
	"testing"

	"github.com/hubdev/hub/hub/rawio"
)

// Every connection the listener accepts (HTTP requests, and the WebSockets
// handlers take over) reads and writes with raw calls on Linux: an
// ordinary system call wakes the runtime's monitor thread on the first
// call after each idle spell, which at one caller is every request.
func TestAcceptedConnectionsUseRawIO(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := limitConns(ln, 4, slog.New(slog.DiscardHandler))
	defer l.Close()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := rawio.Bounder(c); !ok {
		t.Fatalf("accepted connection %T (over %T) is not raw I/O", c, c.(*limitedConn).Conn)
	}
	if _, err := cl.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if n, err := c.Read(buf); n != 1 || err != nil {
		t.Fatalf("read = %d, %v", n, err)
	}
}
