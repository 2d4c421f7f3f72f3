package hub

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

// fdLessListener fails every Accept as a process out of descriptors does.
type fdLessListener struct{ net.Listener }

func (l fdLessListener) Accept() (net.Conn, error) {
	return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
}

// Running out of file descriptors is said at the default log level (the
// HTTP server only logs its accept retries at debug), thinned: the 1st,
// 2nd, 4th, 8th… time (the server retries every few milliseconds).
func TestAcceptOutOfDescriptorsIsLogged(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var logs bytes.Buffer
	l := limitConns(fdLessListener{ln}, 4, slog.New(slog.NewTextHandler(&logs, nil)))
	for range 8 {
		if _, err := l.Accept(); !errors.Is(err, syscall.EMFILE) {
			t.Fatalf("Accept = %v", err)
		}
	}
	if n := strings.Count(logs.String(), "out of file descriptors"); n != 4 {
		t.Fatalf("%d warnings:\n%s", n, logs.String())
	}
}
