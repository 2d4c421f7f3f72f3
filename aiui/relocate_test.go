package aiui

import (
	"context"
	"testing"

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
