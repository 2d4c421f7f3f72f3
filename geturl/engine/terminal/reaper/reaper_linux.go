package reaper

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// orphanScan is how often the reaper reaps processes orphaned into it when
// nothing else wakes it. It takes no SIGCHLD: receiving signals costs a Go
// program two more threads, which would double the reaper's cost per
// command, and a zombie that waits a second harms nobody.
const orphanScan = time.Second

// dupTo makes fd a copy of from.
func dupTo(from, fd int) { syscall.Dup3(from, fd, 0) }

// run is the reaper's whole life, one thread blocked in epoll_wait on the
// command pipe and a pidfd of the shell.
// It makes itself a child subreaper unless started as ArgOrphaning (adopt
// false).
func run(argv []string, adopt bool) int {
	r := newReaper(adopt)
	// Started as /proc/self/exe, it would show as "exe" in ps and top.
	// (Package init runs on the main thread, whose name is the process's.)
	name := []byte("hub-reaper\x00")
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetName, uintptr(unsafe.Pointer(&name[0])), 0)
	if adopt {
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
			r.line("err " + strconv.Itoa(int(errno)))
			return 126
		}
	}
	if code, ok := r.start(argv); !ok {
		return code
	}
	pid := r.shell

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
	for {
		n, err := syscall.EpollWait(ep, events, wait)
		if err != nil && err != syscall.EINTR {
			r.killTree()
			return 1
		}
		if r.holding && !r.reapAll() {
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
			if r.readCommands(cmds) {
				return 0
			}
		}
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

// onlyShellLeft reports whether the reaper's one child is the shell, from
// its threads' children lists: then, the shell having exited, nothing of
// the command is left, as whatever it started would hang below another
// child (orphans come here). Most commands leave nothing, and this spares
// them two passes over /proc. false when the lists cannot be read.
func (r *reaper) onlyShellLeft() bool {
	if !r.adopts {
		return false // orphans are elsewhere
	}
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
