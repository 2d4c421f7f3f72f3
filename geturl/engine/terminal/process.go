package terminal

import (
	"bufio"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/hubdev/hub/geturl/engine/terminal/reaper"
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
// descendant, SIGKILL after KillGrace. A shell that exits on its own has
// what it left in the reaper's session ended the same way (a foreground
// command's background jobs, a background server's children); what
// deliberately left the session (a daemon that called setsid) is released
// and lives on after a foreground command, and is held until the session's
// end after a background one (hold). When the hub dies, the reaper sees its command pipe close
// and kills the tree; when the reaper stops answering, forceEnd does.
type proc struct {
	clock Clock
	grace time.Duration
	drain time.Duration
	cmd   *exec.Cmd // the reaper (unix)
	// job is the command's tree where the OS holds it (Windows), with
	// superviseJob in the reaper's place; nil under a reaper.
	job jobTree
	// reap waits for the reaper (or the supervisor's end) to be released.
	reap func()
	ctl  *os.File // commands to the reaper; closing it kills the tree
	// reaperGone is closed when the reaper has exited (still unreaped:
	// until cmd.Wait its pid, the session's id, stays reserved), with
	// reaperWS its status.
	reaperGone chan struct{}
	reaperWS   syscall.WaitStatus
	forced     sync.Once // forceEnd
	status     *bufio.Reader
	pid        int // the shell
	out        *os.File
	closeOut   sync.Once
	ansi       ansiStripper
	red        *redactor
	capture    *capture
	activity   chan struct{} // a token after each chunk of output
	readDone   chan struct{}
	exited     chan struct{} // the shell exited (not reaped yet)
	stopCh     chan struct{}
	stopOnce   sync.Once
	done       chan struct{} // tree dealt with, output drained, reaper reaped
	// onDone, when set before supervise starts, runs just before done is
	// closed (the background registry forgets the process there, so a
	// caller woken by done sees it gone).
	onDone    func()
	startedAt time.Time
	exitedAt  time.Time
	// hold, set before supervise starts, keeps what a background shell
	// left outside its session until a stop (holdDetached); holding is
	// closed once something is held (done follows otherwise).
	hold    bool
	holding chan struct{}
	statusR *os.File

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
func (p *proc) waitShell() {
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
	switch {
	case p.timedOut || p.stopped:
		p.sweep(reaper.TermTree, reaper.KillTree, reaper.KillTree)
	case p.hold:
		p.sweep(reaper.TermSession, reaper.KillSession, reaper.Hold)
		p.holdDetached()
	default:
		p.sweep(reaper.TermSession, reaper.KillSession, reaper.Release)
	}
	select {
	case <-p.reaperGone:
		if !p.reaperWS.Exited() || p.reaperWS.ExitStatus() != 0 {
			p.forceEnd() // it died: end what it leaves in its session
		}
	case <-p.clock.After(reaperAnswerWait):
		p.forceEnd()
	}
	p.reap() // the reaper, reaped only now
	p.ctl.Close()
	p.statusR.Close()
	p.closeOut.Do(func() { p.out.Close() })
	if p.onDone != nil {
		p.onDone()
	}
	close(p.done)
}

// holdDetached waits, after a background shell exited on its own, until
// what it left outside its session (a daemon that called setsid, a server
// started with `exec setsid`) has exited too, or until a stop: the reaper
// keeps those in its tree (reaper.Hold), so the session's end or a
// shutdown still ends them instead of leaving them to init.
func (p *proc) holdDetached() {
	held := make(chan bool, 1)
	go func() {
		line, err := p.status.ReadString('\n')
		held <- err == nil && line == "hold\n"
	}()
	select {
	case h := <-held:
		if !h {
			return // nothing was held: the reaper exits
		}
	case <-p.clock.After(reaperAnswerWait):
		return // a stuck reaper: supervise's forceEnd takes over
	}
	close(p.holding)
	select {
	case <-p.reaperGone:
		return
	case <-p.stopCh:
	}
	p.termThenKill(p.reaperGone)
}

// termThenKill sends the tree SIGTERM (with SIGCONT, so a stopped process
// can act on it), then SIGKILL if gone is not closed within the grace
// period; it reports whether it had to.
func (p *proc) termThenKill(gone <-chan struct{}) (killed bool) {
	p.tell(reaper.TermTree)
	select {
	case <-gone:
		return false
	case <-p.clock.After(p.grace):
	}
	p.tell(reaper.KillTree)
	return true
}

// terminate ends the shell and every process below it (termThenKill),
// and the reaper itself if it does not act on the kill.
func (p *proc) terminate() {
	if !p.termThenKill(p.exited) {
		return
	}
	select {
	case <-p.exited:
	case <-p.clock.After(reaperAnswerWait):
		p.forceEnd()
		<-p.exited // the reaper is gone: its status pipe is closed
	}
}

// reaperAnswerWait is how long the reaper has to act on a last command
// (KillTree, Release) before the hub takes over with forceEnd: a reaper
// that is merely slow (a loaded machine) must not have its released
// daemons killed, while one that was stopped gets no more than this.
const reaperAnswerWait = 5 * time.Second

// sweep ends what the exited shell left — in the reaper's session, or in
// the whole tree after a terminate — and drains the output: term, then
// kill after the grace period (or at once when the pipe is closed), then
// last, which makes the reaper exit. Normally nothing is left and the pipe
// is at EOF, and this costs the reaper two passes over /proc.
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

// forceEnd ends the command without its supervisor's help: the reaper's
// (forceEndReaper) or, for a job tree, the job's (forceEndJob).
func (p *proc) forceEnd() {
	if p.job != nil {
		p.forceEndJob()
		return
	}
	p.forceEndReaper()
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
