//go:build unix

package geturl

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/geturl/control"
	"github.com/hubdev/hub/geturl/tunnel"
)

// An operator who leaves the page while cloudflared is still starting
// gets the tunnel all the same: the start is not tied to the request.
func TestQuickTunnelStartOutlivesThePage(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cloudflared"), []byte(`#!/bin/sh
read _ < "$0.go"
echo '2026-12-01T10:00:01Z INF |  https://slow-tunnel.trycloudflare.com |' >&2
exec sleep 300
`), 0o755)
	gate := filepath.Join(dir, "cloudflared.go")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	b := startBridge(t, nil)
	sess := b.uiLogin(t)
	ctx, cancel := context.WithCancel(context.Background())
	// No body: the server notices a client gone only once it has read the
	// whole body (a page's fetch sends none).
	req, _ := http.NewRequestWithContext(ctx, "POST", b.controlURL("/ui/api/tunnel/start"), nil)
	req.Header.Set("Origin", "http://127.0.0.1:"+strconv.Itoa(b.Ports[1]))
	req.Header.Set(control.SessionHeader, sess)
	left := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		left <- err
	}()
	adaptertest.WaitFor(t, "cloudflared to start", func() bool { return b.s.tunnel.Status().State == tunnel.StateStarting })
	cancel() // the page goes away
	<-left
	var release *os.File
	adaptertest.WaitFor(t, "cloudflared to wait for its cue", func() bool {
		f, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0) // ENXIO until it reads
		release = f
		return err == nil
	})
	release.WriteString("go\n")
	release.Close()
	adaptertest.WaitFor(t, "the tunnel to run", func() bool {
		return strings.Contains(b.s.Status().Note, "tunnel: https://slow-tunnel.trycloudflare.com")
	})
}
