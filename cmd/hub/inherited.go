package main

import (
	"os"
	"strconv"
	"syscall"
)

// closeInheritedOnExec marks every descriptor above stderr close-on-exec.
// Go opens its own files that way, but a descriptor this process
// inherited is not (a caller's `hub start 4>&1 | cat`, a test runner's or
// make's pipe), and a detached hub would hold it for its whole life: the
// reader of that pipe would wait for EOF until the hub exits. What the
// hub is meant to get is passed explicitly (exec.Cmd dups it in place).
func closeInheritedOnExec() {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range fds {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
