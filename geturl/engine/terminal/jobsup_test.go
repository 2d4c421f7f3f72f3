package terminal

import (
	"bufio"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/engine/terminal/reaper"
)

// fakeJob is a jobTree without processes: a shell that exits when told
// (or killed) and children that live until killed or told to exit. It
// lets the Windows lifecycle (superviseJob under proc) run here.
type fakeJob struct {
	mu       sync.Mutex
	shellEnd chan struct{} // closed when the shell exited
	code     uint32
	children int
	kills    int
	closed   bool
	changed  chan struct{} // closed and replaced on every change
	outW     *os.File      // the tree's output; closed when it is empty
}

func newFakeJob(t *testing.T, children int) (*fakeJob, *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return &fakeJob{shellEnd: make(chan struct{}), children: children, changed: make(chan struct{}), outW: w}, r
}

func (f *fakeJob) changedLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
	select {
	case <-f.shellEnd:
		if f.children == 0 && f.outW != nil {
			f.outW.Close()
			f.outW = nil
		}
	default:
	}
}

// exitShell ends the shell on its own with code.
func (f *fakeJob) exitShell(code uint32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.shellEnd:
		return
	default:
	}
	f.code = code
	close(f.shellEnd)
	f.changedLocked()
}

// childExits ends one child on its own.
func (f *fakeJob) childExits() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.children > 0 {
		f.children--
	}
	f.changedLocked()
}

func (f *fakeJob) waitShell() uint32 {
	<-f.shellEnd
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.code
}

func (f *fakeJob) kill() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.kills++
	f.children = 0
	select {
	case <-f.shellEnd:
	default:
		f.code = 1 // TerminateJobObject's exit code
		close(f.shellEnd)
	}
	f.changedLocked()
}

func (f *fakeJob) waitEmpty(stop <-chan struct{}) bool {
	for {
		f.mu.Lock()
		ch := f.changed
		empty := f.children == 0
		select {
		case <-f.shellEnd:
		default:
			empty = false
		}
		f.mu.Unlock()
		if empty {
			return true
		}
		select {
		case <-stop:
			return false
		case <-ch:
		}
	}
}

func (f *fakeJob) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.children = 0
	f.changedLocked()
}

func (f *fakeJob) state() (kills int, closed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.kills, f.closed
}

func newFakeProc(t *testing.T, children int) (*proc, *fakeJob) {
	f, out := newFakeJob(t, children)
	p, err := newJobProc(f, 4242, out, spawnSpec{root: "/p", limit: 1 << 10}, wallClock{}, time.Millisecond, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return p, f
}

func waitDone(t *testing.T, p *proc) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(generous):
		t.Fatal("the proc never finished")
	}
}

// A foreground timeout ends the job's whole tree; the result says so.
func TestJobTimeoutEndsTree(t *testing.T) {
	p, f := newFakeProc(t, 3)
	deadline := make(chan time.Time, 1)
	deadline <- time.Now()
	go p.supervise(deadline)
	waitDone(t, p)
	kills, closed := f.state()
	if !p.timedOut || kills == 0 || !closed || f.children != 0 {
		t.Fatalf("timedOut %v kills %d closed %v children %d", p.timedOut, kills, closed, f.children)
	}
	if code, _ := p.exit(); code != 1 {
		t.Fatalf("exit code %d", code)
	}
}

// A stop (Job.Cancel, Runner.Stop, Manager.Shutdown) ends the tree too.
func TestJobStopEndsTree(t *testing.T) {
	p, f := newFakeProc(t, 2)
	go p.supervise(nil)
	p.stop()
	waitDone(t, p)
	if kills, closed := f.state(); !p.stopped || kills == 0 || !closed {
		t.Fatalf("stopped %v kills %d closed %v", p.stopped, kills, closed)
	}
}

// A shell that exits on its own has its exit code reported, and what it
// left in the job (a `start /b` child) is ended: nothing leaves a job.
func TestJobShellExitEndsLeftovers(t *testing.T) {
	p, f := newFakeProc(t, 1)
	go p.supervise(nil)
	f.exitShell(7)
	waitDone(t, p)
	if code, _ := p.exit(); code != 7 || p.timedOut || p.stopped {
		t.Fatalf("exit %d timedOut %v stopped %v", code, p.timedOut, p.stopped)
	}
	if kills, closed := f.state(); kills == 0 || !closed || f.children != 0 {
		t.Fatalf("kills %d closed %v children %d", kills, closed, f.children)
	}
}

// The protocol's Hold: with something left, the supervisor says "hold"
// and ends when the tree empties on its own; a stop then kills it.
func TestJobHold(t *testing.T) {
	for _, stop := range []bool{false, true} {
		f, out := newFakeJob(t, 1)
		out.Close()
		ctlR, ctl, _ := os.Pipe()
		statusR, statusW, _ := os.Pipe()
		gone := make(chan struct{})
		go superviseJob(f, ctlR, statusW, func() { close(gone) })
		status := bufio.NewReader(statusR)
		f.exitShell(0)
		if ws, ok := reaper.ReadExit(status); !ok || ws.ExitStatus() != 0 {
			t.Fatalf("exit line: %v %v", ws, ok)
		}
		ctl.Write([]byte{reaper.Hold})
		if line, err := status.ReadString('\n'); err != nil || line != "hold\n" {
			t.Fatalf("hold line: %q %v", line, err)
		}
		if stop {
			ctl.Write([]byte{reaper.TermTree})
		} else {
			f.childExits()
		}
		select {
		case <-gone:
		case <-time.After(generous):
			t.Fatal("the supervisor never ended")
		}
		if kills, closed := f.state(); (kills > 0) != stop || !closed {
			t.Fatalf("stop %v: kills %d closed %v", stop, kills, closed)
		}
		ctl.Close()
		statusR.Close()
	}
}

// The hub gone (its end of the command pipe closed): the tree is killed.
func TestJobHubGoneKills(t *testing.T) {
	f, out := newFakeJob(t, 2)
	out.Close()
	ctlR, ctl, _ := os.Pipe()
	statusR, statusW, _ := os.Pipe()
	defer statusR.Close()
	gone := make(chan struct{})
	go superviseJob(f, ctlR, statusW, func() { close(gone) })
	ctl.Close()
	select {
	case <-gone:
	case <-time.After(generous):
		t.Fatal("the supervisor never ended")
	}
	if kills, closed := f.state(); kills == 0 || !closed || f.children != 0 {
		t.Fatalf("kills %d closed %v children %d", kills, closed, f.children)
	}
}
