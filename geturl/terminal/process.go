package terminal

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// proc is one shell started by the terminal and everything it owns: its
// process group. The shell is started with setsid, so it leads a new
// session and a new process group (pgid = its pid) with no controlling
// terminal: the group is what a timeout or a stop kills, never anything
// else, and a command that opens /dev/tty (a password prompt) fails at once
// instead of hanging. Standard input is /dev/null; stdout and stderr share
// one pipe, so their lines interleave as they would in a terminal.
//
// Its lifecycle: the leader exits (or is terminated: SIGTERM and SIGCONT to
// the group, SIGKILL after KillGrace); then what it left in its group gets
// the same treatment; then the remaining output is drained, bounded by
// DrainWait for processes that left the group while holding the pipe; then
// the leader is reaped. On Linux the leader stays unreaped until the group
// has been dealt with, so its group id cannot have been reused.
type proc struct {
	clock    Clock
	grace    time.Duration
	drain    time.Duration
	cmd      *exec.Cmd
	pid      int
	out      *os.File
	closeOut sync.Once
	ansi     ansiStripper
	red      *redactor
	capture  *capture
	activity chan struct{} // a token after each chunk of output
	readDone chan struct{}
	exited   chan struct{} // the leader exited (on Linux: not reaped yet)
	stopCh   chan struct{}
	stopOnce sync.Once
	done     chan struct{} // group dealt with, output drained, leader reaped
	// onDone, when set before supervise starts, runs just before done is
	// closed (the background registry forgets the process there, so a
	// caller woken by done sees it gone).
	onDone    func()
	startedAt time.Time
	exitedAt  time.Time

	// Set before done is closed.
	reaped   bool
	state    *os.ProcessState
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

func spawn(s spawnSpec, clock Clock, grace, drain time.Duration) (*proc, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(s.shell, "-c", s.command)
	cmd.Dir = s.dir
	cmd.Env = s.env
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	w.Close() // the child has its copy; EOF comes when every holder closed it
	if err != nil {
		r.Close()
		return nil, err
	}
	p := &proc{
		clock:     clock,
		grace:     grace,
		drain:     drain,
		cmd:       cmd,
		pid:       cmd.Process.Pid,
		out:       r,
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
	go p.waitLeader()
	return p, nil
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

func (p *proc) waitLeader() {
	if err := waitExitedNoReap(p.pid); err != nil {
		p.state, _ = p.cmd.Process.Wait() // the state is what counts
		p.reaped = true
	}
	p.exitedAt = p.clock.Now()
	close(p.exited)
}

// stop asks supervise to terminate the group. It may be called any time,
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
	p.sweep()
	if !p.reaped {
		_ = p.cmd.Wait() // an *exec.ExitError for a non-zero status; the state says it
		p.state = p.cmd.ProcessState
		p.reaped = true
	}
	p.closeOut.Do(func() { p.out.Close() })
	if p.onDone != nil {
		p.onDone()
	}
	close(p.done)
}

// terminate ends the leader and its group: SIGTERM (with SIGCONT, so a
// stopped process can act on it), then SIGKILL after the grace period.
func (p *proc) terminate() {
	p.signal(syscall.SIGTERM)
	p.signal(syscall.SIGCONT)
	select {
	case <-p.exited:
	case <-p.clock.After(p.grace):
		p.signal(syscall.SIGKILL)
		<-p.exited
	}
}

// sweep ends whatever the exited leader left in its group — background
// jobs of a foreground command, children of a background server — and
// drains the output. Normally the group is empty and the pipe at EOF, and
// this costs two signals to a group holding only the leader's zombie.
func (p *proc) sweep() {
	p.signal(syscall.SIGTERM)
	p.signal(syscall.SIGCONT)
	select {
	case <-p.readDone:
	case <-p.clock.After(p.grace):
	}
	p.signal(syscall.SIGKILL)
	select {
	case <-p.readDone:
	case <-p.clock.After(p.drain):
		// Someone outside the group still holds the pipe: stop reading.
		p.closeOut.Do(func() { p.out.Close() })
		<-p.readDone
	}
}

// signal sends sig to the process group. An error means there is no such
// group any more (ESRCH, after the leader was reaped on non-Linux systems)
// or nothing left that may be signalled; either way there is nothing to do.
func (p *proc) signal(sig syscall.Signal) { _ = syscall.Kill(-p.pid, sig) }

// exit describes how the leader ended: its exit code (-1 when a signal
// killed it) and the signal's name.
func (p *proc) exit() (code int, signal string) {
	if p.state == nil {
		return -1, ""
	}
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, signalName(ws.Signal())
	}
	return p.state.ExitCode(), ""
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
