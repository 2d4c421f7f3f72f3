package terminal

import (
	"syscall"
	"unsafe"
)

const (
	pPID    = 1         // P_PID
	wExited = 0x4       // WEXITED
	wNoWait = 0x1000000 // WNOWAIT
)

// waitExitedNoReap blocks until process pid has exited, without reaping it
// (waitid with WNOWAIT). While the exited leader stays unreaped its pid —
// which is also its process group's id — cannot be given to another
// process, so signalling the group afterwards can only reach processes the
// command left in it.
func waitExitedNoReap(pid int) error {
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), wExited|wNoWait, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return errno
		}
	}
}
