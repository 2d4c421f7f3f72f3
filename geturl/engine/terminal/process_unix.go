//go:build linux || darwin

package terminal

import (
	"bufio"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/hubdev/hub/geturl/engine/terminal/reaper"
)

// Supported says whether this OS can run terminal commands: nil on Linux,
// where the reaper (a child subreaper) keeps every process a command
// starts in one tree it can end, and on macOS, where the reaper finds
// them by parent and session in the kern.proc listing (see package
// reaper for the one case that escapes it there).
func Supported() error { return nil }

// defaultShell is the POSIX shell.
func defaultShell() string { return "/bin/sh" }

func spawn(s spawnSpec, clock Clock, grace, drain time.Duration) (*proc, error) {
	var pipes [6]*os.File // output, ctl, status: read and write ends
	for i := 0; i < len(pipes); i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(pipes[:i]...)
			return nil, err
		}
		pipes[i], pipes[i+1] = r, w
	}
	out, outW, ctlR, ctl, statusR, statusW := pipes[0], pipes[1], pipes[2], pipes[3], pipes[4], pipes[5]
	exe, err := reaperExe()
	if err != nil {
		closeAll(pipes[:]...)
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        []string{reaper.Arg0, s.shell, "-c", s.command},
		Dir:         s.dir,
		Env:         s.env,
		Stdout:      outW,
		Stderr:      outW,
		ExtraFiles:  []*os.File{ctlR, statusW},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	err = cmd.Start()
	// The reaper has its copies; EOF comes when every holder closed them.
	closeAll(outW, ctlR, statusW)
	if err != nil {
		closeAll(out, ctl, statusR)
		return nil, err
	}
	p := &proc{
		clock:      clock,
		grace:      grace,
		drain:      drain,
		cmd:        cmd,
		ctl:        ctl,
		reaperGone: make(chan struct{}),
		status:     bufio.NewReader(statusR),
		out:        out,
		red:        newRedactor(s.root, "/project", false),
		capture:    newCapture(s.limit),
		activity:   make(chan struct{}, 1),
		readDone:   make(chan struct{}),
		exited:     make(chan struct{}),
		stopCh:     make(chan struct{}),
		done:       make(chan struct{}),
		holding:    make(chan struct{}),
		statusR:    statusR,
		reap:       func() { cmd.Wait() },
	}
	go func() {
		p.reaperWS, _ = reaper.AwaitExit(cmd.Process.Pid)
		close(p.reaperGone)
	}()
	statusR.SetReadDeadline(time.Now().Add(reaperStartWait))
	p.pid, err = reaper.ReadPid(p.status)
	if err != nil {
		// It could not start the shell, or is stuck (stopped by the
		// command it had just started): end whatever did start.
		p.forceEnd()
		cmd.Wait()
		closeAll(out, ctl, statusR)
		return nil, err
	}
	statusR.SetReadDeadline(time.Time{})
	p.startedAt = clock.Now()
	go p.read()
	go p.waitShell()
	return p, nil
}

// forceEndReaper ends the command without the reaper's help, for a reaper that
// stopped answering (a command can SIGSTOP its parent) or died (SIGKILL, a
// forged SIGSEGV). While it is alive, even stopped, it still adopts the
// orphans of what is killed below it, so the tree is killed first, then the
// reaper, then whatever it left in its session, reparented to init. The
// reaper stays unreaped throughout, so its pid, which is the session's id,
// names no one else's session. What moved to a session of its own and was
// orphaned by a reaper that died cannot be told from anyone else's.
// It runs once: after a terminate that needed it, the reaper is known dead.
func (p *proc) forceEndReaper() {
	p.forced.Do(func() {
		rpid := p.cmd.Process.Pid
		select {
		case <-p.reaperGone:
		default:
			reaper.EndTree(rpid, reaperKillBound)
			syscall.Kill(rpid, syscall.SIGKILL)
			<-p.reaperGone
		}
		reaper.EndSession(rpid, reaperKillBound)
	})
}

// reaperKillBound bounds each of forceEnd's rounds of killing, against a
// process stuck in the kernel.
const reaperKillBound = 10 * time.Second
