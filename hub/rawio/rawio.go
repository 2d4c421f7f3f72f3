// Package rawio reads and writes a server's TCP connections with raw
// system calls where the platform allows it (Linux).
//
// A loopback bridge's connections carry small requests and frames, read on
// the goroutine the network poller has just woken. The standard library
// makes each read and write a blocking-style system call: it tells the
// scheduler it is entering one, and that bookkeeping wakes the runtime's
// monitor thread (sysmon) out of its idle sleep on the first system call
// after every idle spell, which at one caller is every request. A
// connection from Wrap makes the same calls raw on its non-blocking
// descriptor, still parked and woken by the runtime's poller and bounded by
// the connection's deadlines: such a call never blocks, so it need not tell
// the scheduler, and the monitor thread sleeps on.
//
// A read deadline reaches the descriptor (the runtime's deadline timer)
// only when a Read is about to wait under it, or is waiting when it is
// set: a server that sets and clears deadlines around every request
// without waiting under them (net/http) changes no timer for them. A Read
// may wait under an earlier deadline the descriptor still has, one that
// has not passed (net/http's background read, under the idle deadline of
// the wait before it); when it passes, the Read arms the one last set and
// waits on. A Read that starts past its deadline fails at once, as the
// standard library's does.
//
// A Read always tries the socket before it waits for the poller, even
// right after a short read drained it: the poller is edge-triggered and
// each Read starts by forgetting the readiness it had recorded, so bytes
// that arrived between two Reads would otherwise wait for the next edge.
//
// The price: while only such calls run, the monitor thread does not wake
// to preempt a goroutine that computes for long without a system call; the
// next timer, collection or ordinary system call wakes it.
package rawio

import (
	"net"
	"time"
)

// Wrap returns c reading and writing with raw calls: c itself where raw
// calls are not available (another OS, a net.Pipe, a connection that
// cannot expose its descriptor). Deadlines, Close and addresses are c's.
func Wrap(c net.Conn) net.Conn { return wrap(c) }

// A WriteBounder bounds each write's wait for room itself, starting the
// clock only when a write has to wait: its owner need not set and clear a
// write deadline around every write. An explicit write deadline takes
// precedence while it is set.
type WriteBounder interface {
	BoundWrites(d time.Duration)
}

// Bounder finds the WriteBounder under c: c itself, or the connection a
// wrapper exposes through a NetConn method (as crypto/tls.Conn does).
func Bounder(c net.Conn) (WriteBounder, bool) {
	for range 8 {
		if wb, ok := c.(WriteBounder); ok {
			return wb, true
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil, false
		}
		c = u.NetConn()
	}
	return nil, false
}
