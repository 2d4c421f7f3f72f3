//go:build linux

package terminal

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// groupJob is a jobTree over a Linux process group, standing in for a
// Job Object so the job lifecycle runs here with real processes, pipes
// and output (nothing in the group calls setsid in these tests).
type groupJob struct {
	cmd *exec.Cmd
}

func (g *groupJob) waitShell() uint32 {
	g.cmd.Wait()
	ws := g.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 1
	}
	return uint32(ws.ExitStatus())
}

func (g *groupJob) kill() { syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL) }

func (g *groupJob) waitEmpty(stop <-chan struct{}) bool {
	for {
		if syscall.Kill(-g.cmd.Process.Pid, 0) == syscall.ESRCH {
			return true
		}
		select {
		case <-stop:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (g *groupJob) close() { g.kill() }

func startGroupJob(t *testing.T, script, root string) *proc {
	t.Helper()
	out, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	p, err := newJobProc(&groupJob{cmd: cmd}, cmd.Process.Pid, out,
		spawnSpec{root: root, limit: 1 << 10}, wallClock{}, 10*time.Millisecond, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Under the job supervisor, output is captured and redacted as under the
// reaper, a timeout ends the shell and what it started in the background,
// and the output of both ends with them.
func TestJobRealTimeout(t *testing.T) {
	p := startGroupJob(t, `printf 'at /r/oot/x \033[31mred\033[0m\n'; sleep 100 & echo $! >/dev/null; wait`, "/r/oot")
	deadline := make(chan time.Time, 1)
	go p.supervise(deadline)
	for !strings.Contains(p.capture.snapshot().Text, "red") {
		select {
		case <-p.activity:
		case <-time.After(generous):
			t.Fatal("no output")
		}
	}
	deadline <- time.Now()
	waitDone(t, p)
	if got := p.capture.snapshot().Text; got != "at /project/x red\n" {
		t.Fatalf("output %q", got)
	}
	if !p.timedOut || syscall.Kill(-p.pid, 0) != syscall.ESRCH {
		t.Fatalf("timedOut %v; the group is still alive", p.timedOut)
	}
}

// A shell that exits on its own gives its exit code; its background child
// is ended with it (nothing outlives a job).
func TestJobRealExitEndsChildren(t *testing.T) {
	p := startGroupJob(t, `sleep 100 & echo started; exit 3`, "/r/oot")
	go p.supervise(nil)
	waitDone(t, p)
	if code, _ := p.exit(); code != 3 || p.timedOut || p.capture.snapshot().Text != "started\n" {
		t.Fatalf("exit %d timedOut %v output %q", code, p.timedOut, p.capture.snapshot().Text)
	}
	if syscall.Kill(-p.pid, 0) != syscall.ESRCH {
		t.Fatal("the background sleep outlived the shell")
	}
}
