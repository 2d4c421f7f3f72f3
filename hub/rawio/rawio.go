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
// A connection from Wrap is also a WriteHolder: its owner can hold the
// answers to input it has already read and send them in one write once
// there is nothing more to read.
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

// Bounder finds the WriteBounder under c (see under).
func Bounder(c net.Conn) (WriteBounder, bool) { return under[WriteBounder](c) }

// A WriteHolder holds small writes while its owner handles input it has
// already read, and sends them together once there is nothing left to
// read: a peer that sends several messages back to back gets their
// answers in one write (one wake-up of the peer, one trip through the
// loopback's stack) instead of one each, and a peer that waits for each
// answer gets it as soon as the reader has nothing else to do, which is
// at once. The answers are the same bytes in the same order.
//
// While writes are held (HoldWrites(true)), a Write that fits in 8 KiB
// with what is held already is copied and returns at once. What
// is held goes out, in order, when a Read finds nothing to read and is
// about to wait, before any later Write that is not held, on Flush, and
// (one try that does not wait) on Close; a Write too large to hold sends
// what is held first. A failed send of held bytes fails every later
// Write. Neither a Read nor Flush waits for another writer to send what
// is held: a writer waiting for room sends it first, else a goroutine
// does, so a reader never stops reading for a peer that is not.
type WriteHolder interface {
	HoldWrites(on bool)
	Flush()
}

// Holder finds the WriteHolder under c (see under).
func Holder(c net.Conn) (WriteHolder, bool) { return under[WriteHolder](c) }

// under finds a T under c: c itself, or the connection a wrapper exposes
// through a NetConn method (as crypto/tls.Conn does).
func under[T any](c net.Conn) (T, bool) {
	for range 8 {
		if t, ok := c.(T); ok {
			return t, true
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = u.NetConn()
	}
	var zero T
	return zero, false
}
