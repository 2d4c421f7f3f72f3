package supervisor

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/hub"
)

// TestKeepStateRewritesAMissingOrCorruptStateFile is issue 15 row 9: while
// the hub runs, a deleted, corrupted, loosened or foreign hub.json is
// rewritten within one check interval, and a removed hub.lock is taken
// again, so status and stop keep working and no second hub can start.
func TestKeepStateRewritesAMissingOrCorruptStateFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state")
		lock, err := AcquireLock(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Release()
		st := &State{PID: os.Getpid(), Control: "http://127.0.0.1:4242", Key: "the-key", Started: time.Now()}
		if err := WriteState(dir, st); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		// The hub keeps the state file on its one FileKeeper.
		keeper := hub.NewFileKeeper(StateCheckInterval)
		go keeper.Run(ctx)
		done := make(chan struct{})
		go func() {
			KeepState(ctx, keeper, lock, st, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
			close(done)
		}()
		path := filepath.Join(dir, StateFileName)
		healed := func(what string) {
			t.Helper()
			time.Sleep(StateCheckInterval)
			synctest.Wait()
			got, err := ReadState(dir)
			if err != nil || got.PID != st.PID || got.Key != st.Key {
				t.Fatalf("%s: state after one interval = %+v, %v", what, got, err)
			}
			if _, live, msg := Probe(dir); live != Running {
				t.Fatalf("%s: probe = %v (%s)", what, live, msg)
			}
		}
		os.Remove(path)
		healed("deleted")
		os.WriteFile(path, []byte("{garbage"), 0o600)
		healed("corrupted")
		os.Chmod(path, 0o644)
		healed("made 0644")
		WriteState(dir, &State{PID: 1, Control: "http://127.0.0.1:1", Key: "planted"})
		healed("naming another pid")

		os.Remove(filepath.Join(dir, LockFileName))
		healed("lock file removed")
		if _, err := AcquireLock(dir); err == nil || !strings.Contains(err.Error(), "already running") {
			t.Fatalf("a second hub could lock the recreated lock file: %v", err)
		}

		// An untouched file is left alone (not rewritten every interval).
		before, _ := os.Stat(path)
		time.Sleep(3 * StateCheckInterval)
		synctest.Wait()
		if after, _ := os.Stat(path); !os.SameFile(before, after) {
			t.Fatal("an intact state file was rewritten")
		}
		cancel()
		<-done
	})
}
