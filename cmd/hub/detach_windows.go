package main

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/windows"
)

// detach starts cmd with no console (DETACHED_PROCESS) in a process
// group of its own (CREATE_NEW_PROCESS_GROUP), so closing the caller's
// console or its Ctrl-C does not reach the hub, and lets it inherit only
// the readiness pipe's handle, whose number is the --ready-fd value
// returned.
func detach(cmd *exec.Cmd, ready *os.File) string {
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CreationFlags:              windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP,
		HideWindow:                 true,
		AdditionalInheritedHandles: []syscall.Handle{syscall.Handle(ready.Fd())},
	}
	if home, err := os.UserHomeDir(); err == nil {
		cmd.Dir = home
	}
	return strconv.FormatUint(uint64(ready.Fd()), 10)
}

// keepFromChildren keeps the inherited readiness handle from whatever
// the hub itself starts.
func keepFromChildren(fd int) {
	windows.SetHandleInformation(windows.Handle(fd), windows.HANDLE_FLAG_INHERIT, 0)
}

// abandonStart ends a hub that never became ready: Windows has no signal
// to ask it, and its control endpoint was never announced.
func abandonStart(p *os.Process) (how string) {
	p.Kill()
	return "was terminated"
}

// closeInheritedOnExec does nothing on Windows: a child inherits only the
// handles exec.Cmd lists (the standard ones and AdditionalInheritedHandles),
// never whatever this process happens to hold.
func closeInheritedOnExec() {}
