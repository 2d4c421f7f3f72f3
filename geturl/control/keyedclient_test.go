package control

import (
	"os"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner/portownertest"
)

func TestMain(m *testing.M) {
	portownertest.Main() // a listener of another user's (keyedclient_test.go)
	os.Exit(m.Run())
}

// TestClientSendsNoKeyToAnotherUser: `hub geturl status` with the control
// file of a control plane of ours that died, naming a port the user
// nobody now holds, exits 3 (a stale file) with the refusal naming the
// holder and the file; the holder receives not a byte. It used to
// receive the key in the X-Geturl-Key header.
func TestClientSendsNoKeyToAnotherUser(t *testing.T) {
	sq := portownertest.Start(t, "127.0.0.1:0")
	d := adaptertest.TempDirs(t)
	if err := WriteFile(d, File{PID: os.Getpid(), Port: 1, ControlPort: sq.Port, Key: "leftover-control-key"}); err != nil {
		t.Fatal(err)
	}
	c, err := Locate(d)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Status(t.Context())
	if hub.ExitCode(err) != hub.ExitNotRunning {
		t.Fatalf("Status = %v (exit %d), want exit %d", err, hub.ExitCode(err), hub.ExitNotRunning)
	}
	sq.Refused(t, err, "the control file "+FilePath(d))
	sq.Untouched(t)
}
