package stitchslop

import (
	"os"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// A session file deleted or damaged while the bridge runs is written
// again: without it every shell command and face says no bridge runs.
func TestSessionFileKeptInPlace(t *testing.T) {
	defer func(d time.Duration) { sessionCheck = d }(sessionCheck)
	sessionCheck = 10 * time.Millisecond
	b := startBridge(t, nil)
	path := sessionPath(b.configDir(), b.Port())
	for _, damage := range []func(){
		func() { os.Remove(path) },
		func() { os.WriteFile(path, []byte("{"), 0o600) },
	} {
		damage()
		adaptertest.WaitFor(t, "the session file back", func() bool {
			sf, err := readSession(path)
			return err == nil && sf.PID == os.Getpid() && sf.Key == b.S.Key()
		})
	}
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * sessionCheck) // a keeper still running would put it back
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the session file outlived the bridge: %v", err)
	}
}
