//go:build linux

package procgroup

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The child and what it starts share a group of their own, and End reaches
// both: the grandchild does not outlive it.
func TestEndReachesTheGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 300 & echo $!; wait")
	cmd.SysProcAttr = Attr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var buf [32]byte
	n, _ := out.Read(buf[:])
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		t.Fatalf("grandchild pid %q: %v", buf[:n], err)
	}
	if pgid, _ := syscall.Getpgid(cmd.Process.Pid); pgid != cmd.Process.Pid {
		t.Fatalf("child's group %d, want its own %d", pgid, cmd.Process.Pid)
	}
	if err := End(cmd.Process, false); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		// Dead once gone, or a zombie no one reaps (init in a container
		// may not).
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(grandchild) + "/stat")
		if errors.Is(err, os.ErrNotExist) || err == nil && strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the grandchild outlived End")
		}
	}
}
