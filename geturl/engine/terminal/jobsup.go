package terminal

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/hubdev/hub/geturl/engine/terminal/reaper"
)

// jobTree is the OS's hold on every process of one command where there is
// no reaper process: on Windows, a Job Object that the shell was put in
// before it ran (process_windows.go). Whatever the command starts is in
// it and cannot leave it.
type jobTree interface {
	// waitShell blocks until the shell exits and returns its exit code.
	waitShell() uint32
	// kill ends every process in the tree, the shell included.
	kill()
	// waitEmpty blocks until no process of the tree is left (true) or
	// stop is closed (false); with stop already closed it reports whether
	// the tree is empty now.
	waitEmpty(stop <-chan struct{}) bool
	// close releases the tree; what is still in it is ended
	// (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE).
	close()
}

// jobKillRounds bounds how often killTree kills again what a fork racing
// the kill added to the tree, each round waiting up to jobKillWait.
const (
	jobKillRounds = 10
	jobKillWait   = time.Second
)

// killTree kills the tree until it is empty, within the bounds above.
func killTree(t jobTree) {
	for range jobKillRounds {
		t.kill()
		stop := make(chan struct{})
		timer := time.AfterFunc(jobKillWait, func() { close(stop) })
		empty := t.waitEmpty(stop)
		timer.Stop()
		if empty {
			return
		}
	}
}

// superviseJob stands in for the reaper process where the tree is held by
// the OS: it speaks the reaper's protocol (package reaper's commands on
// ctl, "exit W" and "hold" lines on status) in the hub's own process, so
// proc's lifecycle (process.go) is the same code on every OS. What
// differs, because the tree is one Job Object:
//   - there is no SIGTERM: Term* commands already end the tree (the grace
//     period passes at once);
//   - nothing leaves the job, so nothing is released: after a foreground
//     command the whole tree ends with the shell, and Hold keeps a
//     background command's tree until it is empty or a stop;
//   - the hub's death closes the job's only handle, which ends the tree.
//
// It closes status and calls gone once it is done, as a reaper exits.
func superviseJob(t jobTree, ctl, status *os.File, gone func()) {
	exited := make(chan struct{})
	go func() {
		code := t.waitShell()
		status.WriteString("exit " + strconv.FormatUint(uint64(rawExit(code)), 10) + "\n")
		close(exited)
	}()
	cmds := make(chan byte)
	go func() {
		defer close(cmds)
		r := bufio.NewReader(ctl)
		for {
			c, err := r.ReadByte()
			if err != nil {
				return
			}
			cmds <- c
		}
	}()
	defer func() {
		<-exited // the exit line comes before the end of status
		status.Close()
		ctl.Close()
		for range cmds { // the reader ends at the closed ctl
		}
		t.close()
		gone()
	}()
	for {
		c, ok := <-cmds
		switch {
		case !ok: // the hub gave up on this command
			killTree(t)
			return
		case c == reaper.TermTree || c == reaper.TermSession || c == reaper.KillSession:
			t.kill()
		case c == reaper.KillTree || c == reaper.Release:
			killTree(t)
			return
		case c == reaper.Hold:
			now := make(chan struct{})
			close(now)
			if t.waitEmpty(now) {
				return // nothing to hold
			}
			status.WriteString("hold\n")
			stop := make(chan struct{})
			done := make(chan bool, 1)
			go func() { done <- t.waitEmpty(stop) }()
			for {
				select {
				case <-done:
					return
				case c, ok := <-cmds:
					if !ok || c == reaper.KillTree || c == reaper.TermTree {
						close(stop)
						<-done
						killTree(t)
						return
					}
				}
			}
		}
	}
}

// rawExit is an exit code as the reaper protocol's "exit W" line carries
// it, the OS's raw wait status: the code itself on Windows, code<<8 on
// unix (where the Linux tests run this supervisor).
func rawExit(code uint32) uint32 {
	if runtime.GOOS == "windows" {
		return code
	}
	return (code & 0xff) << 8
}

// newJobProc makes the proc of a shell already running in t (its pid), its
// output read from out, supervised by superviseJob.
func newJobProc(t jobTree, pid int, out *os.File, s spawnSpec, clock Clock, grace, drain time.Duration) (*proc, error) {
	ctlR, ctl, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		closeAll(ctlR, ctl)
		return nil, err
	}
	p := &proc{
		clock:      clock,
		grace:      grace,
		drain:      drain,
		job:        t,
		ctl:        ctl,
		reaperGone: make(chan struct{}),
		status:     bufio.NewReader(statusR),
		pid:        pid,
		out:        out,
		red:        newRedactor(s.root, "/project", runtime.GOOS == "windows"),
		capture:    newCapture(s.limit),
		activity:   make(chan struct{}, 1),
		readDone:   make(chan struct{}),
		exited:     make(chan struct{}),
		stopCh:     make(chan struct{}),
		done:       make(chan struct{}),
		holding:    make(chan struct{}),
		statusR:    statusR,
		reap:       func() {},
	}
	go superviseJob(t, ctlR, statusW, func() { close(p.reaperGone) })
	p.startedAt = clock.Now()
	go p.read()
	go p.waitShell()
	return p, nil
}

// forceEndJob is forceEnd where the tree is a jobTree: the supervisor is
// the hub's own goroutine and always answers, so this only ends the tree
// at once.
func (p *proc) forceEndJob() {
	p.forced.Do(func() { p.job.kill() })
}
