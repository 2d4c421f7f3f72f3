package mcpserver

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

var sigpipeOnce sync.Once

// catchSIGPIPE makes a write to a closed stdout fail with EPIPE instead
// of killing the process: by default Go dies of SIGPIPE there, before a
// face can clean up (a standalone bridge's session file, an in-process
// backend's control file) or say on stderr why it exits. The failed write
// ends the session instead (outputError). Notify rather than Ignore: an
// ignored signal stays ignored in the programs we start, a caught one
// does not.
func catchSIGPIPE() {
	sigpipeOnce.Do(func() {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	})
}
