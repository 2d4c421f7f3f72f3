package supervisor

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLockAndProbe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if _, live, _ := Probe(dir); live != NotRunning {
		t.Fatalf("empty dir: %v", live)
	}
	lock, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir mode %v", fi.Mode().Perm())
	}
	st := &State{PID: os.Getpid(), Control: "http://127.0.0.1:1", Key: "k", Started: time.Now()}
	if err := WriteState(dir, st); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, StateFileName)); fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode %v", fi.Mode().Perm())
	}
	if _, live, msg := Probe(dir); live != Running {
		t.Fatalf("probe = %v (%s), want running", live, msg)
	}
	if _, err := AcquireLock(dir); !errors.Is(err, ErrAlreadyRunning) || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("second lock: %v", err)
	}
	// Releasing the lock with the file left behind: the pid is alive (it is
	// us) but nobody holds the lock, so the file must not be trusted.
	lock.Release()
	if _, live, msg := Probe(dir); live != Stale || !strings.Contains(msg, "not a hub") {
		t.Fatalf("probe after release = %v (%s), want stale", live, msg)
	}
	RemoveStateIfOurs(dir, os.Getpid()+1)
	if _, err := os.Stat(filepath.Join(dir, StateFileName)); err != nil {
		t.Fatal("removed a state file naming another pid")
	}
	RemoveStateIfOurs(dir, os.Getpid())
	if _, live, _ := Probe(dir); live != NotRunning {
		t.Fatal("state file not removed")
	}
}

func TestProbeDeadPID(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	WriteState(dir, &State{PID: cmd.Process.Pid, Control: "http://127.0.0.1:1", Key: "k"})
	_, live, msg := Probe(dir)
	if live != Stale || !strings.Contains(msg, "is not running") {
		t.Fatalf("probe = %v (%s), want stale: dead pid", live, msg)
	}
}

func TestProbeCorruptState(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, StateFileName), []byte("{garbage"), 0o600)
	if _, live, msg := Probe(dir); live != Stale || !strings.Contains(msg, "corrupt") {
		t.Fatalf("probe = %v (%s)", live, msg)
	}
	os.WriteFile(filepath.Join(dir, StateFileName), []byte(`{"pid":1,"control":"http://evil.example:1"}`), 0o600)
	if _, live, _ := Probe(dir); live != Stale {
		t.Fatal("a state file pointing off-loopback was trusted")
	}
	// The right prefix, but userinfo moves the host off loopback, or more
	// follows the port.
	for _, control := range []string{"http://127.0.0.1:1@192.0.2.1:80", "http://127.0.0.1:80/x", "http://127.0.0.1:80?x", "http://127.0.0.1:0", "http://127.0.0.1:99999"} {
		os.WriteFile(filepath.Join(dir, StateFileName), []byte(`{"pid":1,"control":"`+control+`"}`), 0o600)
		if _, err := ReadState(dir); err == nil {
			t.Errorf("control %q was trusted", control)
		}
	}
}

func TestAcquireLockUnwritableDir(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root writes anywhere")
	}
	parent := t.TempDir()
	os.Chmod(parent, 0o500)
	defer os.Chmod(parent, 0o700)
	if _, err := AcquireLock(filepath.Join(parent, "state")); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("err = %v", err)
	}
}

func TestControlAuth(t *testing.T) {
	stopped := make(chan struct{}, 1)
	c := &Control{Key: "the-key", Port: 4242, Status: func() any { return map[string]int{"adapters": 4} },
		Stop: func() { stopped <- struct{}{} }}
	tests := []struct {
		name   string
		method string
		path   string
		host   string
		origin string
		key    string
		want   int
	}{
		{"origin refused before the key", "GET", "/status", "127.0.0.1:4242", "https://evil.example", "the-key", 403},
		{"origin refused even when empty", "GET", "/status", "127.0.0.1:4242", "\x00empty", "the-key", 403},
		{"rebinding host", "GET", "/status", "evil.example:4242", "", "the-key", 403},
		{"no key", "GET", "/status", "127.0.0.1:4242", "", "", 401},
		{"wrong key", "GET", "/status", "127.0.0.1:4242", "", "the-kez", 401},
		{"longer wrong key", "GET", "/status", "127.0.0.1:4242", "", "the-key-and-more", 401},
		{"status", "GET", "/status", "127.0.0.1:4242", "", "the-key", 200},
		{"unknown route", "GET", "/nope", "127.0.0.1:4242", "", "the-key", 404},
		{"stop", "POST", "/stop", "localhost:4242", "", "the-key", 202},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.path, nil)
			r.Host = tt.host
			switch tt.origin {
			case "":
			case "\x00empty":
				r.Header["Origin"] = []string{""}
			default:
				r.Header.Set("Origin", tt.origin)
			}
			if tt.key != "" {
				r.Header.Set(KeyHeader, tt.key)
			}
			w := httptest.NewRecorder()
			c.ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.want, w.Body)
			}
		})
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("POST /stop did not call Stop")
	}
}

func TestControlCallRoundTrip(t *testing.T) {
	c := &Control{Key: "k2", Status: func() any { return map[string]bool{"ok": true} }, Stop: func() {}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.Port = 0
		if _, port, _ := strings.Cut(r.Host, ":"); port != "" {
			c.Port, _ = strconv.Atoi(port)
		}
		c.ServeHTTP(w, r)
	}))
	defer srv.Close()
	code, body, err := ControlCall(context.Background(), &State{Control: srv.URL, Key: "k2"}, "GET", "/status")
	if err != nil || code != 200 || !strings.Contains(string(body), `"ok":true`) {
		t.Fatalf("ControlCall = %d %s %v", code, body, err)
	}
	code, _, _ = ControlCall(context.Background(), &State{Control: srv.URL, Key: "nope"}, "GET", "/status")
	if code != 401 {
		t.Fatalf("bad key answered %d", code)
	}
}

// A state-dir entry that is in the way (hub.lock made a directory) is
// named in the refusal; it said only "state dir X: is a directory".
func TestAcquireLockNamesTheFileInTheWay(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hub")
	if err := os.MkdirAll(filepath.Join(dir, LockFileName), 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o700)
	_, err := AcquireLock(dir)
	if err == nil || !strings.Contains(err.Error(), LockFileName) {
		t.Fatalf("AcquireLock with hub.lock a directory: %v; want an error naming %s", err, LockFileName)
	}
}
