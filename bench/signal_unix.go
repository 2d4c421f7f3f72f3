//go:build !windows

package bench

import (
	"os"
	"syscall"
)

const exeSuffix = ""

func interrupt(p *os.Process) { p.Signal(syscall.SIGINT) }
