package main

import "os"

// scriptSignals: Windows delivers no signal to another process but a kill
// (os.Process.Signal); the scripts that send others are unix-only.
var (
	scriptSignals             = map[string]os.Signal{"KILL": os.Kill}
	pauseSignal, resumeSignal os.Signal
)
