package reaper

import (
	"errors"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// killBound bounds how long the reaper keeps killing and reaping: a
// process stuck in uninterruptible sleep must not hold the command's slot
// for ever. What is still alive then is left to init.
const killBound = 10 * time.Second

// A binary that links this package becomes the reaper when started under
// its name; it never returns to the program's main. The package imports
// only the standard library, so its init runs before almost any other in
// the binary: the reaper does not pay for the hub's initialisation.
func init() {
	if len(os.Args) == 4 && os.Args[0] == Arg0 && os.Args[2] == "-c" {
		os.Exit(run(os.Args[1:]))
	}
}

type reaper struct {
	self     int
	shell    int
	status   *os.File
	reported bool
	reaped   bool // the shell: until then its group id is reserved
}

// orphanScan is how often the reaper reaps processes orphaned into it when
// nothing else wakes it. It takes no SIGCHLD: receiving signals costs a Go
// program two more threads, which would double the reaper's cost per
// command, and a zombie that waits a second harms nobody.
const orphanScan = time.Second

// run is the reaper's whole life, one thread blocked in epoll_wait on the
// command pipe and a pidfd of the shell.
func run(argv []string) int {
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	r := &reaper{self: os.Getpid(), status: os.NewFile(4, "reaper-status")}
	// Started as /proc/self/exe, it would show as "exe" in ps and top.
	// (Package init runs on the main thread, whose name is the process's.)
	name := []byte("hub-reaper\x00")
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetName, uintptr(unsafe.Pointer(&name[0])), 0)
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		r.line("err " + strconv.Itoa(int(errno)))
		return 126
	}
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		r.line("err " + errnoNumber(err))
		return 127
	}
	// Only now, as an ignored signal stays ignored across execve: a stray
	// signal (pkill -f hub, pkill -QUIT for a Go stack dump, the command's
	// kill $PPID) must not end the reaper and set the tree loose. One sent
	// in the instant before this line, and what Go cannot ignore (SIGKILL,
	// SIGSTOP, a forged SIGSEGV), the hub answers by ending the tree
	// itself (terminal's forceEnd).
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGABRT)
	r.shell = pid
	r.line("pid " + strconv.Itoa(pid))
	// Let go of the output pipe: its end of file tells the hub that
	// nothing holds it any more.
	if null, err := syscall.Open(os.DevNull, syscall.O_WRONLY|syscall.O_CLOEXEC, 0); err == nil {
		syscall.Dup3(null, 1, 0)
		syscall.Dup3(null, 2, 0)
		syscall.Close(null)
	}

	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		r.killTree()
		return 1
	}
	watch := func(fd int) {
		syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)})
	}
	watch(3)
	// Without pidfds (before Linux 5.3) the shell is polled instead.
	wait := int(orphanScan / time.Millisecond)
	pidfd, _, errno := syscall.RawSyscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno == 0 {
		watch(int(pidfd))
	} else {
		wait = 50
	}
	events := make([]syscall.EpollEvent, 2)
	cmds := make([]byte, 64)
	holding := false
	for {
		n, err := syscall.EpollWait(ep, events, wait)
		if err != nil && err != syscall.EINTR {
			r.killTree()
			return 1
		}
		if holding && !r.reapAll() {
			return 0 // the last held process has exited
		}
		r.reapOrphans()
		if !r.reported {
			if ws, ok := shellExited(pid); ok {
				r.report(ws)
				if errno == 0 {
					syscall.EpollCtl(ep, syscall.EPOLL_CTL_DEL, int(pidfd), nil)
				}
			}
		}
		for _, ev := range events[:max(n, 0)] {
			if ev.Fd != 3 {
				continue
			}
			k, err := syscall.Read(3, cmds)
			if err == syscall.EINTR || err == syscall.EAGAIN {
				continue
			}
			if k <= 0 { // the hub is gone, or let go
				r.killTree()
				return 0
			}
			for _, c := range cmds[:k] {
				switch c {
				case KillTree:
					r.killTree()
					return 0
				case TermSession:
					r.signalGroup(syscall.SIGTERM, syscall.SIGCONT)
					if !r.onlyShellLeft() {
						signalSession(r.self, syscall.SIGTERM, syscall.SIGCONT)
					}
				case KillSession:
					r.signalGroup(syscall.SIGKILL)
					if !r.onlyShellLeft() {
						signalSession(r.self, syscall.SIGKILL)
					}
				case TermTree:
					r.signalGroup(syscall.SIGTERM, syscall.SIGCONT)
					signalTree(r.self, syscall.SIGTERM, syscall.SIGCONT)
				case Release:
					var ws syscall.WaitStatus
					syscall.Wait4(r.shell, &ws, 0, nil)
					r.reapAll()
					return 0
				case Hold:
					var ws syscall.WaitStatus
					syscall.Wait4(r.shell, &ws, 0, nil)
					r.reaped = true
					if !r.reapAll() {
						return 0
					}
					r.line("hold") // before this, the hub cannot tell
					holding = true
				}
			}
		}
	}
}

func (r *reaper) line(s string) { r.status.WriteString(s + "\n") }

// report passes the shell's status on, once.
func (r *reaper) report(ws syscall.WaitStatus) {
	if !r.reported {
		r.reported = true
		r.line("exit " + strconv.FormatUint(uint64(ws), 10))
	}
}

// reapOrphans reaps the exited processes that were reparented to the
// reaper, never the shell: it stays unreaped (its group id reserved) until
// the hub releases it or the tree is killed. The kernel lists the shell
// first among the children, so once it has exited the orphans wait for the
// end, which follows at once.
func (r *reaper) reapOrphans() {
	for {
		pid, err := waitAnyNoReap()
		if err != nil || pid == 0 || pid == r.shell {
			return
		}
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// reapAll reaps every exited child, reporting the shell's status; it
// returns false once no child is left.
func (r *reaper) reapAll() bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.ECHILD) {
			return false
		}
		if err != nil || pid <= 0 {
			return true
		}
		if pid == r.shell {
			r.reaped = true
			r.report(ws)
		}
	}
}

// onlyShellLeft reports whether the reaper's one child is the shell, from
// its threads' children lists: then, the shell having exited, nothing of
// the command is left, as whatever it started would hang below another
// child (orphans come here). Most commands leave nothing, and this spares
// them two passes over /proc. false when the lists cannot be read.
func (r *reaper) onlyShellLeft() bool {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false
	}
	shell := strconv.Itoa(r.shell)
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			return false
		}
		for _, pid := range strings.Fields(string(b)) {
			if pid != shell {
				return false
			}
		}
	}
	return true
}

// signalGroup signals the shell's process group, while the unreaped shell
// keeps its id from being reused. Unlike signalling pids from a listing,
// this reaches every member at once: a member forking as fast as it can is
// caught too (a fork racing a fatal signal fails).
func (r *reaper) signalGroup(sigs ...syscall.Signal) {
	if !r.reaped {
		for _, s := range sigs {
			syscall.Kill(-r.shell, s)
		}
	}
}

// killTree SIGKILLs every descendant, again and again as processes whose
// parents died are reparented here, until none is left (or the bound).
func (r *reaper) killTree() {
	deadline := time.Now().Add(killBound)
	for pause := time.Millisecond; ; pause = min(2*pause, 20*time.Millisecond) {
		r.signalGroup(syscall.SIGKILL)
		signalTree(r.self, syscall.SIGKILL)
		if !r.reapAll() || time.Now().After(deadline) {
			return
		}
		time.Sleep(pause)
	}
}

func errnoNumber(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return strconv.Itoa(int(errno))
	}
	return "0"
}

// siginfo is the SIGCHLD part of Linux's 64-bit siginfo_t.
type siginfo struct {
	signo, errno, code int32
	_                  int32
	pid                int32
	uid                uint32
	status             int32
	_                  [100]byte
}

// Linux constants the syscall package lacks (x/sys/unix has them, but
// importing it would put this package's init after most of the binary's).
const (
	prSetName           = 15  // PR_SET_NAME
	prSetChildSubreaper = 36  // PR_SET_CHILD_SUBREAPER
	sysPidfdSendSignal  = 424 // pidfd_send_signal, the same on every architecture
	sysPidfdOpen        = 434 // pidfd_open

	pAll    = 0         // P_ALL
	pPID    = 1         // P_PID
	wExited = 0x4       // WEXITED
	wNoWait = 0x1000000 // WNOWAIT

	cldExited = 1 // CLD_EXITED
	cldKilled = 2 // CLD_KILLED
	cldDumped = 3 // CLD_DUMPED
)

func waitid(idtype, id, options int, info *siginfo) error {
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, uintptr(idtype), uintptr(id),
			uintptr(unsafe.Pointer(info)), uintptr(options), 0, 0)
		if errno != syscall.EINTR {
			if errno != 0 {
				return errno
			}
			return nil
		}
	}
}

// shellExited returns pid's status if it has exited, leaving it unreaped
// (WNOWAIT).
func shellExited(pid int) (syscall.WaitStatus, bool) {
	var info siginfo
	if err := waitid(pPID, pid, wExited|wNoWait|syscall.WNOHANG, &info); err != nil || info.pid == 0 {
		return 0, false
	}
	return info.waitStatus(), true
}

// AwaitExit blocks until pid, a child of the caller, has exited, and
// returns its status without reaping it: until it is reaped its pid cannot
// be given to another process (nor, for a session leader such as the
// reaper, its session id to another session).
func AwaitExit(pid int) (syscall.WaitStatus, error) {
	var info siginfo
	if err := waitid(pPID, pid, wExited|wNoWait, &info); err != nil {
		return 0, err
	}
	return info.waitStatus(), nil
}

func (info *siginfo) waitStatus() syscall.WaitStatus {
	switch info.code {
	case cldExited:
		return syscall.WaitStatus(uint32(info.status&0xff) << 8)
	case cldDumped:
		return syscall.WaitStatus(uint32(info.status) | 0x80)
	default: // cldKilled
		return syscall.WaitStatus(uint32(info.status))
	}
}

// waitAnyNoReap returns an exited child's pid (0: none) without reaping it.
func waitAnyNoReap() (int, error) {
	var info siginfo
	if err := waitid(pAll, 0, wExited|wNoWait|syscall.WNOHANG, &info); err != nil {
		return 0, err
	}
	return int(info.pid), nil
}
