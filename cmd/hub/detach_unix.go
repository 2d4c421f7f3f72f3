//go:build unix

package main

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// detach makes cmd the leader of a new session, away from the caller's
// terminal (setsid), and hands it the write end of the readiness pipe as
// descriptor 3; it returns the --ready-fd value that names it.
func detach(cmd *exec.Cmd, ready *os.File) string {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.ExtraFiles = []*os.File{ready}
	cmd.Dir = "/"
	return "3"
}

// keepFromChildren keeps the inherited readiness descriptor fd from
// whatever the hub itself starts (close-on-exec).
func keepFromChildren(fd int) { syscall.CloseOnExec(fd) }

// abandonStart asks a hub that never became ready to stop (SIGTERM).
func abandonStart(p *os.Process) (how string) {
	p.Signal(syscall.SIGTERM)
	return "was sent SIGTERM"
}

// closeInheritedOnExec marks every descriptor above stderr close-on-exec.
// Go opens its own files that way, but a descriptor this process
// inherited is not (a caller's `hub start 4>&1 | cat`, a test runner's or
// make's pipe), and a detached hub would hold it for its whole life: the
// reader of that pipe would wait for EOF until the hub exits. What the
// hub is meant to get is passed explicitly (exec.Cmd dups it in place).
// The descriptors are listed by /proc/self/fd on Linux and /dev/fd on
// macOS and the BSDs.
func closeInheritedOnExec() {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		if fds, err = os.ReadDir("/dev/fd"); err != nil {
			return
		}
	}
	for _, e := range fds {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
