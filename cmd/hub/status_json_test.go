package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/supervisor"
)

// TestStatusJSONWhenTheHubDoesNotAnswer: a hub that holds the lock but
// whose control endpoint fails (hung, or out of step with hub.json) is
// running, not absent: `hub status --json` still prints one JSON document
// on stdout, and exits 1 (failed), not 3 (nothing running).
func TestStatusJSONWhenTheHubDoesNotAnswer(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	dir := filepath.Join(home, "state", "hub")
	// This test process is the "hub": it holds the lock and runs this
	// executable, so Probe finds it running.
	lock, err := supervisor.AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "wedged", http.StatusInternalServerError)
	}))
	defer srv.Close()
	st := &supervisor.State{PID: os.Getpid(), Control: srv.URL, Key: hub.RandomToken(32), Started: time.Now()}
	if err := supervisor.WriteState(dir, st); err != nil {
		t.Fatal(err)
	}

	code, out := runCapturingStdout(t, "hub", "status", "--json")

	if code != hub.ExitFailed {
		t.Errorf("exit %d, want %d", code, hub.ExitFailed)
	}
	var doc statusDoc
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("stdout is not one JSON document (%v): %q", err, out)
	}
	if !doc.Running || doc.PID != os.Getpid() || doc.Message == "" {
		t.Fatalf("status --json = %+v", doc)
	}
}

// TestStatusJSONWhenNothingRuns: with no hub, `status --json` says so and
// carries no running hub's fields at their zero values ("started" in year
// 1, "adapters": null) for a script to mistake for data.
func TestStatusJSONWhenNothingRuns(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))

	code, out := runCapturingStdout(t, "hub", "status", "--json")

	if code != hub.ExitNotRunning {
		t.Errorf("exit %d, want %d", code, hub.ExitNotRunning)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("stdout is not one JSON document (%v): %q", err, out)
	}
	if doc["running"] != false || doc["message"] == "" {
		t.Errorf("status --json = %s", out)
	}
	for _, k := range []string{"pid", "control", "started", "config", "version", "adapters"} {
		if _, ok := doc[k]; ok {
			t.Errorf("status --json with no hub has %q: %s", k, out)
		}
	}
}

// runCapturingStdout runs the CLI in-process and returns its exit code and
// what it wrote on stdout.
func runCapturingStdout(t *testing.T, args ...string) (int, []byte) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	code := run(args)
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	r.Close()
	return code, out
}
