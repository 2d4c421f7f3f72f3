package hubmcp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hubdev/hub/hub/portowner"
	"github.com/hubdev/hub/hub/portowner/portownertest"
	"github.com/hubdev/hub/supervisor"
)

// TestAttachSendsNoKeyToAnotherUser: hub mcp attaching to the hub that
// hub.json names, whose control port the user nobody holds, is refused
// before a byte is sent, for GET /attach and GET /status alike; it used
// to send the key in the X-Hub-Key header of both.
func TestAttachSendsNoKeyToAnotherUser(t *testing.T) {
	sq := portownertest.Start(t, "127.0.0.1:0")
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := supervisor.WriteState(dir, &supervisor.State{PID: os.Getpid(), Control: "http://127.0.0.1:" + strconv.Itoa(sq.Port), Key: "leftover-hub-key"}); err != nil {
		t.Fatal(err)
	}
	st, err := supervisor.ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	source := "the state file " + filepath.Join(dir, supervisor.StateFileName)
	err = attachHub(context.Background(), st)
	if !errors.Is(err, portowner.ErrRefused) {
		t.Fatalf("attachHub = %v, want the refusal", err)
	}
	sq.Refused(t, err, source)
	_, err = fetchStatus(context.Background(), st)
	if !errors.Is(err, portowner.ErrRefused) {
		t.Fatalf("fetchStatus = %v, want the refusal", err)
	}
	sq.Refused(t, err, source)
	sq.Untouched(t)
}
