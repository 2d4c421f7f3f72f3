//go:build unix

package main

import (
	"os"
	"syscall"
)

// scriptSignals are the signals the scripts' sighub and sigbridge send,
// by name; pauseSignal pauses a process and resumeSignal resumes it.
var (
	scriptSignals = map[string]os.Signal{"QUIT": syscall.SIGQUIT, "TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL,
		"STOP": syscall.SIGSTOP, "HUP": syscall.SIGHUP}
	pauseSignal, resumeSignal os.Signal = syscall.SIGSTOP, syscall.SIGCONT
)
