//go:build unix

package mutation_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/engine/terminal"
)

// A generation's end (rotation, stop, delete, a permission change) ends
// its intents too: a running foreground command is killed and one still
// queued for the terminal never starts. Otherwise revoking a project's
// terminal would leave work the agent asked for running after it.
func TestGenerationEndStopsItsIntents(t *testing.T) {
	e := newTermEnv(t, terminal.Config{ForegroundSlots: 1, KillGrace: 100 * time.Millisecond}, nil)
	running := e.ok(e.m + "/x?raw=touch+started;sleep+5;touch+ran")
	for i := 0; i < 500; i++ { // until the command has started
		if _, err := os.Stat(filepath.Join(e.root, "started")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	queued := e.ok(e.m + "/x?raw=touch+queued")
	if queued.State != "pending" {
		t.Fatalf("the second command should wait for the one slot: %s", queued.raw)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.sess.state.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.settle(running)
	e.settle(queued)
	for _, f := range []string{"ran", "queued"} {
		if _, err := os.Stat(filepath.Join(e.root, f)); err == nil {
			t.Errorf("%s exists: an intent of the ended generation kept running", f)
		}
	}
}
