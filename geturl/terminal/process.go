package terminal

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hubdev/hub/geturl/terminal/reaper"
)

// proc is one shell started by the terminal and everything it owns. The
// shell runs under a reaper (package reaper): the hub's own executable,
// started in a new session (no controlling terminal, so a command that opens
// /dev/tty fails at once instead of hanging) and made a child subreaper, so
// that whatever the command starts stays in its tree even after setsid. The
// shell leads its own process group (pgid = its pid). Standard input is
// /dev/null; stdout and stderr share one pipe, so their lines interleave as
// they would in a terminal.
//
// Its lifecycle: the shell exits, or is terminated; then what it left is
// ended; then the remaining output is drained, bounded by DrainWait for
// processes that still hold the pipe; then the reaper is reaped. A timeout,
// a stop or a shutdown ends the whole tree: SIGTERM and SIGCONT to every
// descendant, SIGKILL after KillGrace. A shell that exits on its own has its
// process group ended the same way (a foreground command's background jobs,
// a background server's children); what deliberately left the group (a
// daemon that called setsid) is released and lives on. When the hub dies,
// the reaper sees its command pipe close and kills the tree.
type proc struct {
	clock    Clock
	grace    time.Duration
	drain    time.Duration
	cmd      *exec.Cmd // the reaper
	ctl      *os.File  // commands to the reaper; closing it kills the tree
	status   *bufio.Reader
	pid      int // the shell
	out      *os.File
	closeOut sync.Once
	ansi     ansiStripper
	red      *redactor
	capture  *capture
	activity chan struct{} // a token after each chunk of output
	readDone chan struct{}
	exited   chan struct{} // the shell exited (not reaped yet)
	stopCh   chan struct{}
	stopOnce sync.Once
	done     chan struct{} // tree dealt with, output drained, reaper reaped
	// onDone, when set before supervise starts, runs just before done is
	// closed (the background registry forgets the process there, so a
	// caller woken by done sees it gone).
	onDone    func()
	startedAt time.Time
	exitedAt  time.Time

	// Set before exited is closed.
	ws      syscall.WaitStatus
	wsKnown bool
	// Set before done is closed.
	timedOut bool
	stopped  bool
}

// spawnSpec is what starting a shell needs.
type spawnSpec struct {
	shell   string
	command string
	dir     string // host path of the working directory
	env     []string
	root    string // host path of the project, redacted from output
	limit   int    // output capture limit
}

// reaperStartWait bounds how long the reaper may take to start the shell
// (normally a few milliseconds).
const reaperStartWait = 10 * time.Second

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
	cmd := &exec.Cmd{
		// The running executable itself, even if its file was replaced.
		Path:        "/proc/self/exe",
		Args:        []string{reaper.Arg0, s.shell, "-c", s.command},
		Dir:         s.dir,
		Env:         s.env,
		Stdout:      outW,
		Stderr:      outW,
		ExtraFiles:  []*os.File{ctlR, statusW},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	err := cmd.Start()
	// The reaper has its copies; EOF comes when every holder closed them.
	closeAll(outW, ctlR, statusW)
	if err != nil {
		closeAll(out, ctl, statusR)
		return nil, err
	}
	status := bufio.NewReader(statusR)
	statusR.SetReadDeadline(time.Now().Add(reaperStartWait))
	pid, err := reaper.ReadPid(status)
	if err != nil {
		cmd.Process.Kill() // it has nothing to run, or is stuck
		cmd.Wait()
		closeAll(out, ctl, statusR)
		return nil, err
	}
	statusR.SetReadDeadline(time.Time{})
	p := &proc{
		clock:     clock,
		grace:     grace,
		drain:     drain,
		cmd:       cmd,
		ctl:       ctl,
		status:    status,
		pid:       pid,
		out:       out,
		red:       newRedactor(s.root, "/project"),
		capture:   newCapture(s.limit),
		activity:  make(chan struct{}, 1),
		readDone:  make(chan struct{}),
		exited:    make(chan struct{}),
		stopCh:    make(chan struct{}),
		done:      make(chan struct{}),
		startedAt: clock.Now(),
	}
	go p.read()
	go p.waitShell(statusR)
	return p, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

func (p *proc) read() {
	defer close(p.readDone)
	buf := make([]byte, 32<<10)
	var clean, red []byte
	for {
		n, err := p.out.Read(buf)
		if n > 0 {
			clean = p.ansi.strip(clean[:0], buf[:n])
			red = p.red.write(red[:0], clean)
			p.capture.write(red)
			select {
			case p.activity <- struct{}{}:
			default:
			}
		}
		if err != nil {
			break
		}
	}
	p.capture.write(p.red.flush(nil))
}

// waitShell reads the shell's status from the reaper. If the reaper dies
// without saying it (someone killed it), the shell counts as exited with
// an unknown status.
func (p *proc) waitShell(statusR *os.File) {
	defer statusR.Close()
	p.ws, p.wsKnown = reaper.ReadExit(p.status)
	p.exitedAt = p.clock.Now()
	close(p.exited)
}

// tell sends the reaper a command; a reaper that is gone needs none.
func (p *proc) tell(c byte) { p.ctl.Write([]byte{c}) }

// stop asks supervise to terminate the tree. It may be called any time,
// more than once.
func (p *proc) stop() { p.stopOnce.Do(func() { close(p.stopCh) }) }

// supervise runs the lifecycle to its end; deadline (nil: none) is the
// foreground timeout. It closes done.
func (p *proc) supervise(deadline <-chan time.Time) {
	select {
	case <-p.exited:
	case <-deadline:
		select {
		case <-p.exited: // it finished as the deadline came
		default:
			p.timedOut = true
			p.terminate()
		}
	case <-p.stopCh:
		select {
		case <-p.exited:
		default:
			p.stopped = true
			p.terminate()
		}
	}
	if p.timedOut || p.stopped {
		p.sweep(reaper.TermTree, reaper.KillTree, reaper.KillTree)
	} else {
		p.sweep(reaper.TermGroup, reaper.KillGroup, reaper.Release)
	}
	_ = p.cmd.Wait() // the reaper; its own status says nothing of the command's
	p.ctl.Close()
	p.closeOut.Do(func() { p.out.Close() })
	if p.onDone != nil {
		p.onDone()
	}
	close(p.done)
}

// terminate ends the shell and every process below it: SIGTERM (with
// SIGCONT, so a stopped process can act on it), then SIGKILL after the
// grace period.
func (p *proc) terminate() {
	p.tell(reaper.TermTree)
	select {
	case <-p.exited:
	case <-p.clock.After(p.grace):
		p.tell(reaper.KillTree)
		<-p.exited
	}
}

// sweep ends what the exited shell left — in its group, or in the whole
// tree after a terminate — and drains the output: term, then kill after
// the grace period (or at once when the pipe is closed), then last, which
// makes the reaper exit. Normally nothing is left and the pipe is at EOF,
// and this costs two signals to a group holding only the shell's zombie.
func (p *proc) sweep(term, kill, last byte) {
	p.tell(term)
	select {
	case <-p.readDone:
	case <-p.clock.After(p.grace):
	}
	p.tell(kill)
	select {
	case <-p.readDone:
	case <-p.clock.After(p.drain):
		// Someone outside the tree still holds the pipe: stop reading.
		p.closeOut.Do(func() { p.out.Close() })
		<-p.readDone
	}
	if last != kill {
		p.tell(last)
	}
}

// exit describes how the shell ended: its exit code (-1 when a signal
// killed it) and the signal's name.
func (p *proc) exit() (code int, signal string) {
	switch {
	case !p.wsKnown:
		return -1, ""
	case p.ws.Signaled():
		return -1, signalName(p.ws.Signal())
	}
	return p.ws.ExitStatus(), ""
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGABRT: "SIGABRT", syscall.SIGFPE: "SIGFPE",
	syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGBUS: "SIGBUS",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2",
}

func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return "signal " + strconv.Itoa(int(s))
}
