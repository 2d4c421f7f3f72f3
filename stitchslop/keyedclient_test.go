package stitchslop

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner"
	"github.com/hubdev/hub/hub/portowner/portownertest"
)

// leftoverSession writes a session file of ours naming port, with a live
// pid (ours), as a bridge that died there leaves it when its pid is
// reused, or before a client prunes it.
func leftoverSession(t *testing.T, port int) (dir, source string) {
	t.Helper()
	dir = t.TempDir()
	sf := sessionFile{Port: port, Key: "leftover-session-key", Origin: testOrigin, PID: os.Getpid(), Protocol: 1, StartedAt: time.Now()}
	if err := writeSession(dir, sf); err != nil {
		t.Fatal(err)
	}
	return dir, "the session file " + sessionPath(dir, port)
}

// TestShellClientSendsNoKeyToAnotherUser: `hub stitchslop call` with a
// session file of ours naming a port the user nobody holds exits 3 (a
// stale session file, §4.4) with the refusal naming the holder and the
// file; the holder receives not a byte. It used to receive the key in
// the x-stitchslop-key header.
func TestShellClientSendsNoKeyToAnotherUser(t *testing.T) {
	sq := portownertest.Start(t, "127.0.0.1:0")
	dir, source := leftoverSession(t, sq.Port)
	for _, port := range []int{0, sq.Port} { // the one live file, and --port
		c := &shellClient{ConfigDir: dir, Port: port, Stdout: io.Discard, Stderr: io.Discard}
		_, err := c.do("POST", "/call", map[string]any{"command": "scene.describe"}, 5*time.Second)
		if hub.ExitCode(err) != hub.ExitNotRunning {
			t.Fatalf("--port %d: exit %d (%v), want %d", port, hub.ExitCode(err), err, hub.ExitNotRunning)
		}
		sq.Refused(t, err, source)
		if !strings.HasPrefix(err.Error(), "hub stitchslop: ") {
			t.Errorf("%q does not name the command", err)
		}
	}
	sq.Untouched(t)
}

// TestRemoteSendsNoKeyToAnotherUser: a face or the hub opening the bridge
// of that session file, or a RemoteBridge driving it, is refused before a
// byte is sent, and says why.
func TestRemoteSendsNoKeyToAnotherUser(t *testing.T) {
	sq := portownertest.Start(t, "127.0.0.1:0")
	dir, source := leftoverSession(t, sq.Port)
	ctx := context.Background()

	_, err := OpenRemote(ctx, dir, sq.Port)
	if !errors.Is(err, ErrBridgeGone) || !errors.Is(err, portowner.ErrRefused) {
		t.Fatalf("OpenRemote = %v, want ErrBridgeGone for a refused connection", err)
	}
	sq.Refused(t, err, source)
	if _, err := FindRemote(ctx, dir, testOrigin, 0); !errors.Is(err, ErrBridgeGone) {
		t.Fatalf("FindRemote = %v, want ErrBridgeGone", err)
	}

	// A Remote opened while the bridge was ours, whose port then changed
	// hands: its next new connection is refused, and counts as unsent.
	r := newRemote(dir, sessionFile{Port: sq.Port, Key: "leftover-session-key", Origin: testOrigin, PID: os.Getpid()})
	defer r.Close()
	_, err = r.Call(ctx, "scene.describe", nil)
	if !errors.Is(err, ErrBridgeGone) || !unsent(err) {
		t.Fatalf("Call = %v, want ErrBridgeGone, unsent", err)
	}
	sq.Refused(t, err, source)
	err = r.Events(ctx, "face-1", func(ToolsEvent) {})
	sq.Refused(t, err, source)

	rb := NewRemoteBridge(dir, sq.Port)
	defer rb.Close()
	_, err = rb.BridgeCall(ctx, "scene.describe", nil)
	var nr *adapters.ToolError
	if !errors.As(err, &nr) || nr.Code != adapters.CodeNotRunning {
		t.Fatalf("BridgeCall = %#v, want not running", err)
	}
	sq.Refused(t, err, source)
	sq.Untouched(t)
}
