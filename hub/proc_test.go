//go:build linux

package hub

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestPIDAlive(t *testing.T) {
	if !PIDAlive(os.Getpid()) {
		t.Error("our own pid reads as dead")
	}
	if PIDAlive(0) || PIDAlive(-1) {
		t.Error("pid 0 / -1 read as alive")
	}
	// A child that exited but was not reaped yet is a zombie: dead.
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start true:", err)
	}
	defer cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); !isZombie(cmd.Process.Pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the child never became a zombie")
		}
	}
	if PIDAlive(cmd.Process.Pid) {
		t.Error("a zombie reads as alive")
	}
}

func TestFlockHoldersAndProcessCommand(t *testing.T) {
	path := t.TempDir() + "/lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	if pids, err := FlockHolders(fi); err != nil || len(pids) != 0 {
		t.Fatalf("unlocked: %v %v", pids, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if pids, err := FlockHolders(fi); err != nil || len(pids) != 1 || pids[0] != os.Getpid() {
		t.Fatalf("locked by us: %v %v", pids, err)
	}
	// Another file on the same device is not this one.
	other, _ := os.Create(t.TempDir() + "/other")
	defer other.Close()
	ofi, _ := other.Stat()
	if pids, _ := FlockHolders(ofi); len(pids) != 0 {
		t.Fatalf("another file reported as locked by %v", pids)
	}
	exe, argv, err := ProcessCommand(os.Getpid())
	self, _ := os.Executable()
	if err != nil || exe != self || len(argv) == 0 || argv[0] != os.Args[0] {
		t.Fatalf("ProcessCommand = %q %q %v, want %q", exe, argv, err, self)
	}
}

// ProcessStart tells a process from another that has the same pid later:
// stable for one process, different for a child started after us.
func TestProcessStart(t *testing.T) {
	a, err := ProcessStart(os.Getpid())
	if err != nil || a == "" {
		t.Fatalf("ProcessStart(self) = %q, %v", a, err)
	}
	if b, _ := ProcessStart(os.Getpid()); b != a {
		t.Fatalf("our start changed: %q then %q", a, b)
	}
	time.Sleep(20 * time.Millisecond) // clock ticks are 10 ms
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start sleep:", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if c, err := ProcessStart(cmd.Process.Pid); err != nil || c == a {
		t.Fatalf("a later child's start = %q, %v (ours %q)", c, err, a)
	}
	if _, err := ProcessStart(1 << 30); err == nil {
		t.Fatal("a pid that does not exist has a start")
	}
}
