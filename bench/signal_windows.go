package bench

import "os"

const exeSuffix = ".exe"

// interrupt kills: Windows has no SIGINT to send another process.
func interrupt(p *os.Process) { p.Kill() }
