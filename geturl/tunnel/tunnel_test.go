package tunnel

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
)

// fakeCloudflared writes a script that prints what the real cloudflared
// prints for a Quick Tunnel (on stderr, boxed), records its arguments and
// config file, then behaves as mode says.
func fakeCloudflared(t *testing.T, mode string) (bin, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	argsFile = filepath.Join(dir, "args")
	script := `#!/bin/sh
env > ` + argsFile + `.env.tmp && mv ` + argsFile + `.env.tmp ` + argsFile + `.env
echo "$@" > ` + argsFile + `
for a in "$@"; do case "$prev" in --config) cp "$a" ` + argsFile + `.cfg; echo "$a" > ` + argsFile + `.cfgpath;; esac; prev="$a"; done
echo '2026-12-01T10:00:00Z INF Thank you for trying Cloudflare Tunnel. Doing so, without a Cloudflare account, is a quick way to experiment.' >&2
echo '2026-12-01T10:00:00Z INF Requesting new quick Tunnel on trycloudflare.com...' >&2
`
	switch mode {
	case "ok", "crash-later":
		script += `echo '2026-12-01T10:00:01Z INF +--------------------------------------------------------------------------------------------+' >&2
echo '2026-12-01T10:00:01Z INF |  Your quick Tunnel has been created! Visit it at (it may take some time to be reachable):  |' >&2
echo '2026-12-01T10:00:01Z INF |  https://seasonal-deck-organisms-sf.trycloudflare.com                                      |' >&2
echo '2026-12-01T10:00:01Z INF +--------------------------------------------------------------------------------------------+' >&2
`
		if mode == "crash-later" {
			script += "sleep 0.2\necho '2026-12-01T10:00:02Z ERR failed to connect' >&2\nexit 1\n"
		} else {
			script += "exec sleep 300\n"
		}
	case "fail":
		script += "echo '2026-12-01T10:00:01Z ERR failed to request quick Tunnel: 429 Too Many Requests' >&2\nexit 1\n"
	case "silent":
		script += "exec sleep 300\n"
	}
	bin = filepath.Join(dir, "cloudflared")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, argsFile
}

func manager(bin string) *Manager {
	return &Manager{Target: "http://127.0.0.1:47432", Binary: bin, Log: slog.New(slog.DiscardHandler), StartTimeout: 10 * time.Second}
}

func TestQuickTunnelLifecycle(t *testing.T) {
	bin, argsFile := fakeCloudflared(t, "ok")
	m := manager(bin)
	st, err := m.Start(context.Background())
	if err != nil || st.State != StateRunning || st.Origin != "https://seasonal-deck-organisms-sf.trycloudflare.com" {
		t.Fatalf("start: %+v %v", st, err)
	}
	args, _ := os.ReadFile(argsFile)
	if !strings.Contains(string(args), "--url http://127.0.0.1:47432") || !strings.Contains(string(args), "--config ") {
		t.Fatalf("cloudflared args %q: want --url pointed at the data plane and an explicit --config", args)
	}
	if cfg, _ := os.ReadFile(argsFile + ".cfg"); len(cfg) != 0 {
		t.Fatalf("the config is not empty: %q", cfg)
	}
	cfgPath, _ := os.ReadFile(argsFile + ".cfgpath")
	// A second Start returns the running tunnel.
	if st2, err := m.Start(context.Background()); err != nil || st2.PID != st.PID {
		t.Fatalf("second start: %+v %v", st2, err)
	}
	if st := m.Stop(); st.State != StateStopped || st.Origin != "" {
		t.Fatalf("after stop: %+v", st)
	}
	if hub.PIDAlive(st.PID) {
		t.Fatal("cloudflared survived Stop")
	}
	if _, err := os.Stat(strings.TrimSpace(string(cfgPath))); !os.IsNotExist(err) {
		t.Fatalf("temporary config left behind: %v", err)
	}
}

// A cloudflared we did not start is never signalled.
func TestStopLeavesOtherCloudflaredAlone(t *testing.T) {
	bin, _ := fakeCloudflared(t, "ok")
	other := exec.Command(bin)
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	m := manager(bin)
	m.Stop() // nothing started: nothing to stop
	if _, err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.Stop()
	if !hub.PIDAlive(other.Process.Pid) {
		t.Fatal("Stop killed a cloudflared it did not start")
	}
}

// A crash after the hostname clears it: an ephemeral hostname never
// outlives its child.
func TestCrashClearsHostname(t *testing.T) {
	bin, _ := fakeCloudflared(t, "crash-later")
	m := manager(bin)
	if st, err := m.Start(context.Background()); err != nil || st.Origin == "" {
		t.Fatalf("start: %+v %v", st, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for m.Status().State != StateFailed {
		if time.Now().After(deadline) {
			t.Fatalf("crash not noticed: %+v", m.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := m.Status(); st.Origin != "" || !strings.Contains(st.Error, "failed to connect") {
		t.Fatalf("after the crash: %+v", st)
	}
}

func TestStartFailures(t *testing.T) {
	bin, _ := fakeCloudflared(t, "fail")
	if st, err := manager(bin).Start(context.Background()); err == nil || st.State != StateFailed || !strings.Contains(st.Error, "429") {
		t.Fatalf("failing cloudflared: %+v %v", st, err)
	}
	bin, _ = fakeCloudflared(t, "silent")
	m := manager(bin)
	m.StartTimeout = 200 * time.Millisecond
	if st, err := m.Start(context.Background()); err == nil || st.State != StateStopped {
		t.Fatalf("silent cloudflared: %+v %v", st, err)
	}
	t.Setenv("PATH", t.TempDir())
	m = &Manager{Target: "http://127.0.0.1:1", Log: slog.New(slog.DiscardHandler)}
	if st, err := m.Start(context.Background()); err != ErrUnavailable || st.State != StateUnavailable {
		t.Fatalf("no cloudflared: %+v %v", st, err)
	}
}

// cloudflared runs for as long as the tunnel is up, and any process of the
// user (a command the terminal runs included) can read its
// /proc/<pid>/environ: it gets the hub's environment without the secrets,
// and without cloudflared's own settings but the edge's, which would make
// it something other than a quick tunnel to the data plane.
func TestCloudflaredEnvironment(t *testing.T) {
	bin, argsFile := fakeCloudflared(t, "ok")
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("HOME", "/home/tester")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("GITHUB_TOKEN", "ghp_secret1abcdefgh")
	t.Setenv("DATABASE_URL", "postgres://app:secret2@db/app")
	t.Setenv("TUNNEL_TOKEN", "secret3")
	t.Setenv("TUNNEL_HELLO_WORLD", "true")     // would serve cloudflared's page, not the data plane
	t.Setenv("TUNNEL_NAME", "mine")            // would run a named tunnel on the user's account
	t.Setenv("TUNNEL_LOGLEVEL", "error")       // would hide the banner with the hostname
	t.Setenv("TUNNEL_METRICS", "0.0.0.0:2000") // would listen beyond loopback
	t.Setenv("TUNNEL_EDGE_IP_VERSION", "6")    // how this machine reaches the edge: kept
	m := &Manager{Target: "http://127.0.0.1:47432", Log: slog.New(slog.DiscardHandler), StartTimeout: 10 * time.Second}
	st, err := m.Start(context.Background())
	if err != nil || st.State != StateRunning {
		t.Fatalf("start: %+v %v", st, err)
	}
	defer m.Stop()
	envs := map[string][]byte{}
	envs["the environment cloudflared was started with"], _ = os.ReadFile(argsFile + ".env")
	if runtime.GOOS == "linux" {
		// What another process of the user reads while the tunnel is up,
		// once the script has become sleep. Read during the exec, environ
		// is empty: first the old mm is gone, then (after comm already
		// says sleep) the new one has no environment range set yet.
		proc := "/proc/" + strconv.Itoa(st.PID)
		var b []byte
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			comm, _ := os.ReadFile(proc + "/comm")
			if string(comm) == "sleep\n" {
				var err error
				if b, err = os.ReadFile(proc + "/environ"); err != nil {
					t.Fatal(err)
				}
				if len(b) > 0 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the fake cloudflared never became sleep with an environment (comm %q)", comm)
			}
		}
		envs["/proc/<cloudflared>/environ"] = bytes.ReplaceAll(b, []byte{0}, []byte{'\n'})
	}
	for what, env := range envs {
		// Names only: the test's own environment may hold real secrets.
		lines := strings.Split("\n"+string(env), "\n")
		for _, want := range []string{"HOME=/home/tester", "LANG=C.UTF-8", "TUNNEL_EDGE_IP_VERSION=6", "PATH=" + os.Getenv("PATH")} {
			if !slices.Contains(lines, want) {
				t.Errorf("%s lacks %s", what, want[:strings.IndexByte(want, '=')])
			}
		}
		for _, kv := range lines {
			name, value, _ := strings.Cut(kv, "=")
			if strings.Contains(value, "secret") || strings.HasPrefix(name, "TUNNEL_") && name != "TUNNEL_EDGE_IP_VERSION" {
				t.Errorf("%s holds %s", what, name)
			}
		}
	}
}
