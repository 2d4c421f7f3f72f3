//go:build unix

package main

import "syscall"

// stopSignals: SIGTERM asks for the graceful stop the control endpoint
// would have begun; SIGKILL ends a hub that ignores it.
func stopSignals() (soft *stopSignal, hard stopSignal) {
	return &stopSignal{name: "SIGTERM", send: func(pid int) {
			syscall.Kill(pid, syscall.SIGTERM)
			// a stopped hub (a suspended terminal, a debugger) acts on it
			// only once it runs: wake it to stop gracefully
			syscall.Kill(pid, syscall.SIGCONT)
		}}, stopSignal{name: "SIGKILL", send: func(pid int) {
			syscall.Kill(pid, syscall.SIGKILL)
		}}
}
