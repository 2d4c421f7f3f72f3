package main

import "golang.org/x/sys/windows"

// stopSignals: Windows has no signal that asks a detached process (no
// console) to stop, so the hub's keyed control route (POST /stop) is the
// only graceful stop; past it, the verified pid is terminated.
func stopSignals() (soft *stopSignal, hard stopSignal) {
	return nil, stopSignal{name: "termination", send: func(pid int) {
		h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid))
		if err != nil {
			return
		}
		defer windows.CloseHandle(h)
		windows.TerminateProcess(h, 1)
	}}
}
