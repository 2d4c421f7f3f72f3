package supervisor

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hubdev/hub/hub/portowner"
	"github.com/hubdev/hub/hub/portowner/portownertest"
)

// TestControlCallSendsNoKeyToAnotherUser: `hub status` and `hub stop` (and
// hub mcp, and every adapter asking for the hub's ports) call the control
// endpoint hub.json names with its key. With that port held by the user
// nobody they fail with the refusal naming the holder and the state file,
// and the holder receives not a byte; it used to receive the key in the
// X-Hub-Key header.
func TestControlCallSendsNoKeyToAnotherUser(t *testing.T) {
	sq := portownertest.Start(t, "127.0.0.1:0")
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteState(dir, &State{PID: os.Getpid(), Control: "http://127.0.0.1:" + strconv.Itoa(sq.Port), Key: "leftover-hub-key"}); err != nil {
		t.Fatal(err)
	}
	st, err := ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []struct{ method, path string }{{http.MethodGet, "/status"}, {http.MethodPost, "/stop"}} {
		code, body, err := ControlCall(context.Background(), st, req.method, req.path)
		if !errors.Is(err, portowner.ErrRefused) || code != 0 || body != nil {
			t.Fatalf("%s %s = %d %q %v, want the refusal", req.method, req.path, code, body, err)
		}
		sq.Refused(t, err, "the state file "+filepath.Join(dir, StateFileName))
	}
	sq.Untouched(t)
}
