package geturl

import (
	"os"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/control"
)

// A control file deleted or damaged while geturl runs used to stay that
// way: every `hub geturl` command then said no control plane was running
// (and to start one) until the bridge restarted. The running bridge now
// writes it again, and the CLI finds it.
func TestControlFileIsRewrittenWhileRunning(t *testing.T) {
	old := control.CheckInterval
	control.CheckInterval = 10 * time.Millisecond
	t.Cleanup(func() { control.CheckInterval = old })
	b := startBridge(t, nil)
	path := control.FilePath(b.Dirs)
	for name, damage := range map[string]func() error{
		"deleted": func() error { return os.Remove(path) },
		"corrupt": func() error { return os.WriteFile(path, []byte("garbage\n"), 0o600) },
	} {
		if err := damage(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second) // a failure bound, not a timing claim
		for {
			if cl, err := Locate(b.Dirs); err == nil && cl != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("control file %s: still not found by the CLI", name)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
