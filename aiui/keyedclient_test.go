package aiui

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner"
	"github.com/hubdev/hub/hub/portowner/portownertest"
)

// leftoverControl writes a control file of ours naming port, with a key
// and a prompt key, as a backend of ours that died there leaves it.
func leftoverControl(t *testing.T, d hub.Dirs, port int) ControlFile {
	t.Helper()
	cf := ControlFile{Schema: 1, PID: os.Getpid(), Port: port, Key: "leftover-control-key",
		PromptKey: "leftover-prompt-key", Kind: KindServe}
	b, _ := json.Marshal(cf)
	if err := hub.EnsurePrivateDir(StateDir(d)); err != nil {
		t.Fatal(err)
	}
	if err := hub.WriteFileAtomic(ControlPath(d), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return cf
}

// freePort is a loopback port nothing listens on (just closed).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestClientSendsNoKeyToAnotherUser: the control file of a backend of
// ours that died names a port the user nobody now holds. Locating it, a
// client relocating to it after its backend went, a prompt with the
// prompt key and a stream all fail with the refusal naming the holder and
// the file, and the holder receives not a byte: it used to receive the
// control key in GET /control/info's Authorization header, and the
// prompt key in POST /prompt's.
func TestClientSendsNoKeyToAnotherUser(t *testing.T) {
	sq := portownertest.Start(t, "127.0.0.1:0")
	d := adaptertest.TempDirs(t)
	leftoverControl(t, d, sq.Port)
	source := "the control file " + ControlPath(d)
	ctx := context.Background()

	_, err := Locate(ctx, d)
	if !errors.Is(err, ErrNoBackend) || !errors.Is(err, portowner.ErrRefused) {
		t.Fatalf("Locate = %v, want ErrNoBackend for a refused connection", err)
	}
	sq.Refused(t, err, source)

	// A face whose backend went away re-reads the file and follows it.
	c := newClient(freePort(t), "the-old-key", source)
	c.dirs = &d
	_, err = c.Info(ctx)
	if !errors.Is(err, portowner.ErrRefused) {
		t.Fatalf("Info after relocating = %v, want the refusal", err)
	}
	sq.Refused(t, err, source)
	if c.Base != NewClient(sq.Port, "").Base {
		t.Fatalf("the client did not relocate to the file's port: %s", c.Base)
	}
	_, err = c.Prompt(ctx, "hello", nil)
	sq.Refused(t, err, source)
	err = c.Prompts(ctx, false, func(Record, []byte) error { return nil })
	sq.Refused(t, err, source)
	sq.Untouched(t)
}
