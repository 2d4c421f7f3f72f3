package aiui

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/hubdev/hub/aiui/tools"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// TestClientRelocatesAfterBackendRestart: a face's client whose backend
// restarted (fresh key, maybe a new port) re-reads the control file and
// retries instead of failing every later request — the MCP face outlives
// hub restarts.
func TestClientRelocatesAfterBackendRestart(t *testing.T) {
	h, _ := start(t, nil)
	cl := control(t, h)
	cl.Key = "a-key-from-before-the-restart"
	if _, err := cl.Info(context.Background()); err != nil {
		t.Fatalf("info with a stale key: %v", err)
	}
	cl.Key = "stale-again"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl.Face = "relocating-face"
	attached := make(chan struct{})
	go func() {
		cl.Events(ctx, "/repo", func(FaceEvent) error { return nil })
		close(attached)
	}()
	adaptertest.WaitFor(t, "the face to attach with a stale key", func() bool { return control(t, h).infoFaces() == 1 })
	cancel()
	<-attached
}

func (c *Client) infoFaces() int {
	info, err := c.Info(context.Background())
	if err != nil {
		return -1
	}
	n, _ := info["faces"].(float64)
	return int(n)
}

// A page-tool call whose connection broke after it was sent may have run:
// the client does not send it again to the backend the control file names
// now (it could run twice), while a read is simply asked again there.
func TestClientDoesNotResendACallThatMayHaveRun(t *testing.T) {
	h, _ := start(t, nil) // the backend the control file names
	gone, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer gone.Close()
	var got atomic.Int32
	go func() { // a backend that takes each request whole, then dies
		for {
			conn, err := gone.Accept()
			if err != nil {
				return
			}
			if req, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
				io.Copy(io.Discard, req.Body)
				got.Add(1)
			}
			conn.Close()
		}
	}()
	cl := NewClient(gone.Addr().(*net.TCPAddr).Port, "old-key")
	cl.dirs = &h.Dirs
	if res, err := cl.Call(context.Background(), tools.CallRequest{Name: "set-params"}); err == nil {
		t.Fatalf("a call that may have run was sent again: %+v", res)
	}
	if got.Load() != 1 {
		t.Fatalf("the dying backend got %d requests", got.Load())
	}
	if _, err := cl.Tools(context.Background()); err != nil {
		t.Fatalf("a read was not asked again of the current backend: %v", err)
	}
}

// Which failures are known not to have run a control request: no
// connection, or a 4xx refusal; a 5xx or a connection lost mid-way may
// have.
func TestUnsent(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&statusError{"/control/call", 401, "bad key"}, true},
		{&statusError{"/control/call", 400, "bad body"}, true},
		{&statusError{"/control/call", 500, "internal"}, false},
		{fmt.Errorf("%w: %w", ErrNoBackend, &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), true},
		{fmt.Errorf("%w: %w", ErrNoBackend, &net.OpError{Op: "read", Err: syscall.ECONNRESET}), false},
		{fmt.Errorf("%w: %w", ErrNoBackend, io.ErrUnexpectedEOF), false},
	} {
		if got := unsent(tc.err); got != tc.want {
			t.Errorf("unsent(%v) = %v", tc.err, got)
		}
	}
}
