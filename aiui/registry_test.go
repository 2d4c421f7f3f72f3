package aiui

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	pid := cmd.Process.Pid
	if hub.PIDAlive(pid) {
		t.Skip("the pid was reused at once")
	}
	return pid
}

// Issue 15, row 11: after a backend was killed (-9) its registry record
// stays; the next start removes the records of dead pids and leaves live
// ones and names that are not records alone.
func TestStartRemovesRecordsOfDeadBackends(t *testing.T) {
	h, _ := start(t, nil)
	dirs := h.Dirs
	h.Stop()
	dir := RegistryDir(dirs)
	dead := filepath.Join(dir, strconv.Itoa(deadPID(t))+".json")
	live := filepath.Join(dir, strconv.Itoa(os.Getppid())+".json")
	other := filepath.Join(dir, "notes.json")
	for _, p := range []string{dead, live, other} {
		if err := os.WriteFile(p, []byte(`{"schema":1}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := DefaultConfig()
	cfg.Port = 0
	h2 := adaptertest.Start(t, New(cfg), adaptertest.Options{Dirs: &dirs})
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Fatalf("the dead backend's record is still there: %v", err)
	}
	for _, p := range []string{live, other, filepath.Join(dir, strconv.Itoa(os.Getpid())+".json")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	h2.Stop()
}

// A discovery dir found looser than 0700 (made by something else) is
// tightened when the backend writes its record there.
func TestRegistryDirIsMadePrivate(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	dir := RegistryDir(dirs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	cfg := DefaultConfig()
	cfg.Port = 0
	h := adaptertest.Start(t, New(cfg), adaptertest.Options{Dirs: &dirs})
	defer h.Stop()
	if m := adaptertest.FileMode(t, dir); m != 0o700 {
		t.Fatalf("discovery dir mode %o, want 700", m)
	}
}

// Issue 15, row 11: while the backend runs, a deleted or corrupted
// registry record and a deleted, corrupted, loosened or dead-naming
// control file come back within one check interval; a control file that a
// later live backend took over is left alone, and intact files are not
// rewritten.
func TestBackendKeepsItsFiles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dirs := adaptertest.TempDirs(t)
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		b := &backend{s: New(DefaultConfig()), env: &adapters.Env{Dirs: dirs}, log: log,
			pid: os.Getpid(), port: 4242, started: time.Now().UTC()}
		if err := b.writeControlFile(); err != nil {
			t.Fatal(err)
		}
		if err := b.writeRegistryFile(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			b.keepFiles(ctx, nil, FileCheckInterval)
			close(done)
		}()
		next := func() {
			time.Sleep(FileCheckInterval)
			synctest.Wait()
		}
		healed := func(what string) {
			t.Helper()
			next()
			if got, err := os.ReadFile(b.regPath); err != nil || string(got) != string(b.regData) {
				t.Fatalf("%s: registry record %q, %v", what, got, err)
			}
			if got, err := hub.ReadPrivateFile(b.controlPath, maxControlFile); err != nil || string(got) != string(b.controlFileData()) {
				t.Fatalf("%s: control file %q, %v", what, got, err)
			}
		}
		os.Remove(b.regPath)
		healed("registry record deleted")
		os.WriteFile(b.regPath, []byte("{garbage"), 0o600)
		healed("registry record corrupted")
		os.RemoveAll(RegistryDir(dirs))
		healed("registry dir deleted")
		os.Remove(b.controlPath)
		healed("control file deleted")
		os.WriteFile(b.controlPath, []byte("{garbage"), 0o600)
		healed("control file corrupted")
		keyBefore := b.controlKey()
		os.WriteFile(b.controlPath, []byte("{garbage"), 0o600)
		healed("control file corrupted again")
		if b.controlKey() != keyBefore {
			t.Fatal("a corrupt (but private) control file changed the key")
		}
		os.Chmod(b.controlPath, 0o644)
		healed("control file made 0644")
		// others could have read the key: the file comes back with a new one
		if k := b.controlKey(); k == keyBefore || k == "" || !strings.Contains(string(b.controlFileData()), k) {
			t.Fatal("the key was not replaced after the control file was readable by others")
		}
		planted, _ := json.Marshal(ControlFile{Schema: 1, PID: deadPID(t), Port: 1, Key: "k"})
		hub.WriteFileAtomic(b.controlPath, planted, 0o600)
		healed("control file naming a dead pid")

		// A later backend (a live process) owns the control file now.
		later, _ := json.Marshal(ControlFile{Schema: 1, PID: os.Getppid(), Port: 5151, Key: "theirs"})
		hub.WriteFileAtomic(b.controlPath, later, 0o600)
		regBefore, _ := os.Stat(b.regPath)
		next()
		next()
		if got, _ := os.ReadFile(b.controlPath); string(got) != string(later) {
			t.Fatalf("a later live backend's control file was overwritten: %s", got)
		}
		if regAfter, _ := os.Stat(b.regPath); !os.SameFile(regBefore, regAfter) {
			t.Fatal("an intact registry record was rewritten")
		}
		cancel()
		<-done
	})
}

// The running backend keeps its files: deleted, both are back within a
// (short) check interval, and the shell faces find the backend again.
func TestRunningBackendRewritesDeletedFiles(t *testing.T) {
	h, _ := start(t, func(_ *Config, s *Server) { s.FileCheckInterval = 20 * time.Millisecond })
	reg := filepath.Join(RegistryDir(h.Dirs), strconv.Itoa(os.Getpid())+".json")
	os.Remove(reg)
	os.Remove(ControlPath(h.Dirs))
	adaptertest.WaitFor(t, "the files to come back", func() bool {
		_, err := os.Stat(reg)
		return err == nil
	})
	adaptertest.WaitFor(t, "the control file to come back", func() bool {
		cl, err := Locate(context.Background(), h.Dirs)
		return err == nil && cl.PID == os.Getpid()
	})
	h.Stop()
	if _, err := os.Stat(reg); !os.IsNotExist(err) {
		t.Fatalf("the record outlived the backend: %v", err)
	}
}
