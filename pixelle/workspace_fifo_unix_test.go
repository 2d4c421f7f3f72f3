//go:build unix

package pixelle

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A marker that is a FIFO is refused as not a regular file; opening it
// must not wait for a writer that never comes.
func TestVerifyWorkspaceFIFONoHang(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, MarkerFile), 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := VerifyWorkspace(dir, "ws-1"); done <- err }()
	select {
	case err := <-done:
		var ce *ClientError
		if !errors.As(err, &ce) || ce.Code != "WORKSPACE_MARKER_INVALID" {
			t.Fatalf("got %v, want WORKSPACE_MARKER_INVALID", err)
		}
	case <-time.After(10 * time.Second): // a fail-safe, not a timing assertion
		t.Fatal("VerifyWorkspace blocked opening a FIFO marker")
	}
}
