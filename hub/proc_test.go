package hub

import (
	"os"
	"os/exec"
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
