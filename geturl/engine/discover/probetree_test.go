package discover

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

func writeTool(t *testing.T, body string) (bin string) {
	t.Helper()
	bin = filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// gone reports whether pid has exited (a zombie waiting for a parent that
// does not reap it counts as exited).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}

// A probe cut off at its timeout ends with everything it started: a
// launcher script whose child hangs must not leave that child behind on
// every /p (a read route an agent may fetch any number of times).
func TestSlowProbeLeavesNoProcess(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	bin := writeTool(t, "sleep 300 &\necho $! > '"+pidFile+"'\nwait")
	scope, _ := sandbox.New(t.TempDir())
	d := &Discoverer{Scope: scope, Timeout: 200 * time.Millisecond, Tools: []string{"tool"},
		LookPath: func(string) (string, error) { return bin, nil }}
	d.Discover(context.Background())
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for deadline := time.Now().Add(10 * time.Second); !gone(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the probe's child %d still runs after the probe was cut off", pid)
		}
	}
}

// Concurrent /p requests share one probe of a tool rather than each
// starting its own.
func TestConcurrentProbesRunOnce(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	bin := writeTool(t, "echo x >> '"+count+"'\nsleep 0.3\necho 'tool 1.2.3'")
	scope, _ := sandbox.New(t.TempDir())
	d := &Discoverer{Scope: scope, Timeout: time.Minute, Tools: []string{"tool"},
		LookPath: func(string) (string, error) { return bin, nil }}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if got := d.Discover(context.Background()).Tools; len(got) != 1 || got[0].Version != "1.2.3" {
				t.Errorf("%+v", got)
			}
		})
	}
	wg.Wait()
	b, _ := os.ReadFile(count)
	if n := strings.Count(string(b), "x"); n != 1 {
		t.Errorf("the tool ran %d times, want 1", n)
	}
}
