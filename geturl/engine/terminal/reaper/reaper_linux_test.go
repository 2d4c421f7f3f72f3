package reaper

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/internal/proctest"
)

// hub plays the hub's side: it starts the test binary as the reaper of
// command in dir and reads the shell's pid.
type hub struct {
	t      *testing.T
	cmd    *exec.Cmd
	ctl    *os.File
	status *bufio.Reader
	shell  int
	dir    string
}

func startReaper(t *testing.T, command string) *hub {
	t.Helper()
	return startReaperAs(t, Arg0, command)
}

// startReaperAs starts it under arg0: Arg0, or ArgOrphaning for the way
// it runs on macOS.
func startReaperAs(t *testing.T, arg0, command string) *hub {
	t.Helper()
	dir := t.TempDir()
	ctlR, ctlW, _ := os.Pipe()
	statusR, statusW, _ := os.Pipe()
	t.Cleanup(func() { statusR.Close() })
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{arg0, "/bin/sh", "-c", command},
		Dir:         dir,
		ExtraFiles:  []*os.File{ctlR, statusW},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctlR.Close()
	statusW.Close()
	h := &hub{t: t, cmd: cmd, ctl: ctlW, status: bufio.NewReader(statusR), dir: dir}
	t.Cleanup(func() { h.ctl.Close(); h.cmd.Wait() })
	shell, err := ReadPid(h.status)
	if err != nil {
		t.Fatal(err)
	}
	h.shell = shell
	return h
}

func (h *hub) tell(c byte) { h.ctl.Write([]byte{c}) }

// waitPid waits for a pid file the command writes.
func (h *hub) waitPid(name string) int {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(h.dir, name))
		if err == nil && bytes.HasSuffix(b, []byte("\n")) {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				h.t.Fatal(err)
			}
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("%s never appeared", name)
	return 0
}

var alive = proctest.Alive

func waitDead(t *testing.T, pid int) {
	t.Helper()
	proctest.WaitDead(t, pid, 30*time.Second)
}

// TestKillsTreeWhenHubGoes: when the hub dies its end of the command pipe
// closes, and the reaper kills everything the command started, detached or
// not, and reports how the shell ended.
func TestKillsTreeWhenHubGoes(t *testing.T) {
	proctest.NeedSetsid(t)
	h := startReaper(t, proctest.Detach+`sleep 100 & echo $! > child.pid; wait`)
	pids := []int{h.shell, h.waitPid("detached.pid"), h.waitPid("child.pid")}
	if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(h.cmd.Process.Pid) + "/comm"); string(comm) != "hub-reaper\n" {
		t.Errorf("the reaper is named %q", comm)
	}
	h.ctl.Close() // the hub is gone
	if err := h.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitDead(t, pid)
	}
	if ws, ok := ReadExit(h.status); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("%v %v", ws, ok)
	}
}

// TestReaperIgnoresStraySignals: a SIGTERM, SIGINT or SIGHUP that reaches
// the reaper (pkill -f hub, or the command's own kill $PPID) leaves it in
// charge of the tree, while the shell still gets the signals it is sent.
func TestReaperIgnoresStraySignals(t *testing.T) {
	proctest.NeedSetsid(t)
	h := startReaper(t, proctest.Detach+`kill -TERM -INT -HUP $PPID 2>/dev/null; kill $PPID; kill -INT $PPID; kill -HUP $PPID
		echo sent > signalled; sleep 100`)
	detached := h.waitPid("detached.pid")
	for _, err := os.Stat(filepath.Join(h.dir, "signalled")); err != nil; _, err = os.Stat(filepath.Join(h.dir, "signalled")) {
		time.Sleep(5 * time.Millisecond)
	}
	if !alive(h.cmd.Process.Pid) {
		t.Fatal("a stray signal ended the reaper")
	}
	h.tell(TermSession)
	if ws, ok := ReadExit(h.status); !ok || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("shell: %v %v", ws, ok)
	}
	h.tell(KillTree)
	h.cmd.Wait()
	waitDead(t, detached)
}

// TestGroupThenRelease: the commands a shell that exited on its own gets:
// its group is ended, what detached lives on, and the exit status is the
// shell's.
func TestGroupThenRelease(t *testing.T) {
	proctest.NeedSetsid(t)
	h := startReaper(t, proctest.Detach+`sleep 100 & echo $! > child.pid; exit 3`)
	detached, child := h.waitPid("detached.pid"), h.waitPid("child.pid")
	defer syscall.Kill(detached, syscall.SIGKILL)
	if ws, ok := ReadExit(h.status); !ok || ws.ExitStatus() != 3 {
		t.Fatalf("%v %v", ws, ok)
	}
	if !alive(child) {
		t.Fatal("the group was ended before it was asked to")
	}
	h.tell(KillSession)
	waitDead(t, child)
	h.tell(Release)
	if err := h.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if !alive(detached) {
		t.Fatal("the detached process was killed")
	}
}

// TestTermTreeReachesDetached: TermTree signals processes outside the
// shell's group and session, with SIGCONT so a stopped one acts on it.
func TestTermTreeReachesDetached(t *testing.T) {
	proctest.NeedSetsid(t)
	h := startReaper(t, proctest.Detach+`kill -STOP $(cat detached.pid); sleep 100`)
	detached := h.waitPid("detached.pid")
	h.tell(TermTree)
	waitDead(t, detached)
	waitDead(t, h.shell)
	h.tell(KillTree)
	h.cmd.Wait()
}

// TestReapsOrphans: processes orphaned into the reaper during a long run
// are reaped as they exit, not left as zombies until the end.
func TestReapsOrphans(t *testing.T) {
	h := startReaper(t, `i=0; while [ $i -lt 20 ]; do (sh -c 'exit 0' &); i=$((i+1)); done
		echo done > orphaned; while [ ! -f go ]; do sleep 0.01; done`)
	for _, err := os.Stat(filepath.Join(h.dir, "orphaned")); err != nil; _, err = os.Stat(filepath.Join(h.dir, "orphaned")) {
		time.Sleep(5 * time.Millisecond)
	}
	deadline := time.Now().Add(30 * time.Second)
	for n := zombieChildren(h.cmd.Process.Pid); n > 0; n = zombieChildren(h.cmd.Process.Pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%d zombies under the reaper", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.tell(KillTree)
	h.cmd.Wait()
}

func zombieChildren(parent int) int {
	n := 0
	for _, p := range scan() {
		if p.ppid == parent && p.dead {
			n++
		}
	}
	return n
}

func TestReadPid(t *testing.T) {
	for _, tc := range []struct {
		in   string
		pid  int
		fail string
	}{
		{"pid 42\n", 42, ""},
		{"err 2\n", 0, "no such file"},
		{"", 0, "exited before"},
		{"pid x\n", 0, "said"},
		{"pid -1\n", 0, "said"},
		{"what 3\n", 0, "said"},
	} {
		pid, err := ReadPid(bufio.NewReader(strings.NewReader(tc.in)))
		if pid != tc.pid || (tc.fail == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.fail)) {
			t.Errorf("%q: %d %v", tc.in, pid, err)
		}
	}
}

func TestReadExit(t *testing.T) {
	for _, tc := range []struct {
		in string
		ws syscall.WaitStatus
		ok bool
	}{
		{"exit 768\n", 768, true},
		{"exit 9\n", 9, true},
		{"", 0, false},
		{"exit x\n", 0, false},
		{"pid 9\n", 0, false},
	} {
		ws, ok := ReadExit(bufio.NewReader(strings.NewReader(tc.in)))
		if ok != tc.ok || (ok && ws != tc.ws) {
			t.Errorf("%q: %v %v", tc.in, ws, ok)
		}
	}
}

// TestOrphaningEndsSession: where the reaper adopts nothing (macOS, run
// here as ArgOrphaning), a background job in a group of its own whose
// parent exited is neither below it nor in the shell's group; ending the tree (a timeout or a stop: TermTree; the hub's
// going away: the pipe closes) still ends it, found by its session, along
// with the command's other processes.
func TestOrphaningEndsSession(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("no perl, to start a process in a group of its own")
	}
	for _, tc := range []struct {
		name string
		end  func(*hub)
	}{
		{"TermTree", func(h *hub) { h.tell(TermTree) }},
		{"hub gone", func(h *hub) { h.ctl.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startReaperAs(t, ArgOrphaning, `(perl -e 'setpgrp(0, 0); exec "sleep", "100"' & echo $! > orphan.pid)
				sleep 100 & echo $! > child.pid; wait`)
			orphan, child := h.waitPid("orphan.pid"), h.waitPid("child.pid")
			defer syscall.Kill(orphan, syscall.SIGKILL)
			reaperPid := h.cmd.Process.Pid
			waitFor(t, "the orphan's own group, out of the tree", func() bool {
				_, has := below(scan(), reaperPid)
				p, _ := readStat(orphan)
				return !has[orphan] && p.pgrp == orphan
			})
			if p, ok := readStat(orphan); !ok || p.session != reaperPid {
				t.Fatalf("the orphan left the session: %+v", p)
			}
			tc.end(h)
			waitDead(t, orphan)
			waitDead(t, child)
			waitDead(t, h.shell)
			h.tell(KillTree)
			h.cmd.Wait()
		})
	}
}

// waitFor waits, boundedly, until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
