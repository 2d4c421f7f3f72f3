package supervisor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
)

// victim starts an unrelated long-lived process, as another program of the
// user's would be, and kills it when the test ends.
func victim(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start sleep:", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// holdLock flocks dir's hub.lock from this process, as a hub would.
func holdLock(t *testing.T, dir string) {
	t.Helper()
	lock, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lock.Release)
}

// TestPlantedStateNamingAVictimIsNotAHub is issue 15 row 6: hub.json names
// a live pid and the lock is held, but not by that pid, and that pid is no
// hub. Probe must call it stale, never running, so `hub stop` never
// signals it and `hub status` never asks its endpoint for a table.
func TestPlantedStateNamingAVictimIsNotAHub(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	holdLock(t, dir)
	pid := victim(t)
	if err := WriteState(dir, &State{PID: pid, Control: "http://127.0.0.1:1", Key: "planted"}); err != nil {
		t.Fatal(err)
	}
	_, live, msg := Probe(dir)
	if live != Stale || !strings.Contains(msg, "is not a hub holding hub.lock") || !strings.Contains(msg, "does not hold") {
		t.Fatalf("probe = %v (%s), want stale: the pid does not hold the lock", live, msg)
	}
	if err := VerifyHub(dir, pid); err == nil {
		t.Fatal("a sleep process verified as a hub")
	}
	// The process holding the lock that runs this executable is one.
	if err := VerifyHub(dir, os.Getpid()); err != nil {
		t.Fatalf("the lock holder running our executable: %v", err)
	}
}

// TestVerifyHubWantsTheExecutable: holding the lock is not enough, the
// holder must also be a hub (this executable or a `hub run`).
func TestVerifyHubWantsTheExecutable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := hub.EnsurePrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(dir, LockFileName)
	os.WriteFile(lockPath, nil, 0o600)
	// flock(1) holds the lock while it runs sleep: a lock holder that is
	// not a hub.
	cmd := exec.Command("flock", "--exclusive", lockPath, "sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Skip("no flock(1):", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for !lockHeld(dir) {
		if time.Now().After(deadline) {
			t.Fatal("flock never took the lock")
		}
		time.Sleep(5 * time.Millisecond)
	}
	err := VerifyHub(dir, cmd.Process.Pid)
	if err == nil || !strings.Contains(err.Error(), "not hub") {
		t.Fatalf("VerifyHub(flock) = %v, want: not a hub", err)
	}
}

// TestProbeRefusesStateOthersCouldPlant is rows 6–8 for the state dir and
// hub.json: real links and modes in a temp dir. Such state is Unsafe: no
// pid from it is trusted or shown.
func TestProbeRefusesStateOthersCouldPlant(t *testing.T) {
	write := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "state")
		holdLock(t, dir)
		if err := WriteState(dir, &State{PID: os.Getpid(), Control: "http://127.0.0.1:1", Key: "k"}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	cases := map[string]struct {
		plant func(t *testing.T, dir string) string // returns the path the message must name
		want  string
	}{
		"state dir is a symlink": {func(t *testing.T, dir string) string {
			link := filepath.Join(t.TempDir(), "linked-state")
			os.Symlink(dir, link)
			return link
		}, "symbolic link"},
		"state dir is world-writable": {func(t *testing.T, dir string) string {
			os.Chmod(dir, 0o777)
			return dir
		}, "chmod 700"},
		"hub.json is a symlink": {func(t *testing.T, dir string) string {
			p := filepath.Join(dir, StateFileName)
			other := filepath.Join(t.TempDir(), "elsewhere.json")
			os.Rename(p, other)
			os.Symlink(other, p)
			return p
		}, "symbolic link"},
		"hub.json is readable by others": {func(t *testing.T, dir string) string {
			p := filepath.Join(dir, StateFileName)
			os.Chmod(p, 0o644)
			return p
		}, "is mode 0644; it holds a key, so it must be 0600 (chmod 600"},
		"hub.json belongs to another user": {func(t *testing.T, dir string) string {
			if os.Geteuid() != 0 {
				t.Skip("only root can give a file away")
			}
			p := filepath.Join(dir, StateFileName)
			os.Chown(p, 65534, 65534)
			return p
		}, "is owned by uid 65534"},
		"state dir belongs to another user": {func(t *testing.T, dir string) string {
			if os.Geteuid() != 0 {
				t.Skip("only root can give a directory away")
			}
			os.Chown(dir, 65534, 65534)
			return dir
		}, "is owned by uid 65534"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := write(t)
			named := tc.plant(t, dir)
			probed := dir
			if strings.Contains(name, "dir is a symlink") {
				probed = named
			}
			st, live, msg := Probe(probed)
			if live != Unsafe || st != nil || !strings.Contains(msg, tc.want) || !strings.Contains(msg, named) {
				t.Fatalf("probe = %v %v (%s), want unsafe naming %s and %q", st, live, msg, named, tc.want)
			}
			if _, err := AcquireLock(probed); err == nil && !strings.Contains(name, "hub.json") {
				t.Fatal("a hub took a lock in an unsafe state dir")
			}
		})
	}
}

// TestLockFileIsNeverFollowed: a hub.lock planted as a symlink is refused,
// and its target is neither created nor locked.
func TestLockFileIsNeverFollowed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := hub.EnsurePrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "victim")
	os.Symlink(target, filepath.Join(dir, LockFileName))
	if _, err := AcquireLock(dir); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("AcquireLock = %v", err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatal("the lock's link target was created")
	}
}
