package ws

import (
	"net"
	"time"
)

// A socket's frames are read and written on the read goroutine that the
// network poller has just woken, a few hundred bytes at a time. Where the
// platform allows it (rawio_linux.go), the reads and writes of a hijacked
// TCP connection are made as raw system calls on its non-blocking
// descriptor, still parked and woken by the runtime's poller and bounded by
// the connection's deadlines: such a call never blocks, so it need not tell
// the scheduler it is entering a system call, and that bookkeeping is what
// wakes the runtime's monitor thread (sysmon) out of its idle sleep on the
// first system call after every idle spell, twice per relayed command.
//
// rawIO returns the connection to hand gws: c itself where raw calls are
// not available (another OS, a net.Pipe, a connection that cannot expose
// its descriptor).
func rawIO(c net.Conn) net.Conn { return newRawConn(c) }

// A writeBounder bounds each write's wait for room itself, starting the
// clock only when a write has to wait (rawConn): the caller need not set
// and clear a write deadline around every frame.
type writeBounder interface {
	boundWrites(d time.Duration)
}
