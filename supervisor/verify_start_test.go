package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/hub"
)

// verifyByStart is how macOS and Windows know the pid in hub.json is the
// hub holding the lock (they list no lock holders); it runs here, against
// Linux's process start times, so the logic is tested, not only built.
func TestVerifyByStart(t *testing.T) {
	self, err := hub.ProcessStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	vic := victim(t)
	for _, tt := range []struct {
		name  string
		lock  bool
		state *State // nil: none written
		pid   int
		want  string // "" accepts
	}{
		{"the hub that wrote it, holding the lock", true, &State{PID: os.Getpid(), ProcessStart: self}, os.Getpid(), ""},
		{"nobody holds the lock", false, &State{PID: os.Getpid(), ProcessStart: self}, os.Getpid(), "no process holds hub.lock"},
		{"the file names another pid", true, &State{PID: os.Getpid(), ProcessStart: self}, vic, "the state file names pid"},
		{"a planted file naming a victim, without a start", true, &State{PID: vic}, vic, "does not say when it started"},
		{"a pid reused since the hub wrote it", true, &State{PID: os.Getpid(), ProcessStart: "1"}, os.Getpid(), "reused the hub's pid"},
		{"no state file", true, nil, os.Getpid(), "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if err := hub.EnsurePrivateDir(dir); err != nil {
				t.Fatal(err)
			}
			if tt.lock {
				holdLock(t, dir)
			}
			if tt.state != nil {
				tt.state.Control = "http://127.0.0.1:1"
				if err := WriteState(dir, tt.state); err != nil {
					t.Fatal(err)
				}
			}
			err := verifyByStart(dir, tt.pid)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("verifyByStart = %v, want %q", err, tt.want)
			}
		})
	}
}
