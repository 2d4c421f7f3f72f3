package rawio

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// maxRW bounds one read or write call, as the standard library does.
const maxRW = 1 << 30

// heldMax bounds the bytes a connection holds (WriteHolder); a buffer
// that grew past heldKeep is let go once sent.
const (
	heldMax  = 8 << 10
	heldKeep = 1 << 10
)

// rawConn is a TCP connection whose Read and Write are raw
// non-blocking system calls driven through its syscall.RawConn: the
// runtime's poller still parks the goroutine while the socket has nothing
// to read or no room to write, and the connection's deadlines still bound
// the wait. Everything else (Close, addresses, deadlines) is the wrapped
// connection's. The per-call state lives in the struct, guarded by one
// mutex per direction, so that a call allocates nothing.
type rawConn struct {
	net.Conn
	rc syscall.RawConn

	rmu    sync.Mutex
	rbuf   []byte
	rn     int
	rerr   error
	readFn func(fd uintptr) bool

	wmu     sync.Mutex
	wbuf    []byte
	wn      int
	werr    error
	writeFn func(fd uintptr) bool
	armed   bool // this Write set the write deadline (wmu)

	// Held writes (WriteHolder): held and heldErr are guarded by wmu;
	// pending says held is not empty, for a Read to check without wmu;
	// flushRead tells Read that doRead stopped to send them (rmu).
	hold       atomic.Bool
	held       []byte
	heldErr    error
	pending    atomic.Bool
	flushing   atomic.Bool // a goroutine waits for wmu to send what is held
	flushRead  bool
	flushLater bool // this Read left the held bytes to a flusher (rmu)

	// bound limits how long a Write may wait for room, counted from its
	// first wait: the write deadline is set only then, and cleared when
	// the Write returns, so a write that finds room at once (nearly every
	// frame) touches no deadline. An explicit write deadline
	// (SetWriteDeadline, SetDeadline) takes precedence while it is set.
	bound    atomic.Int64 // time.Duration; 0: unbounded
	explicit atomic.Bool
	// wdFD: the descriptor may have a write deadline (set before the
	// descriptor gets one, cleared after it loses it). Clearing a write
	// deadline the descriptor does not have (net/http does after every
	// request) is then no call at all.
	wdFD atomic.Bool

	// The read deadline reaches the descriptor only when it can matter:
	// when a Read is about to park, or is under way when the deadline is
	// set. Until then SetReadDeadline only records it, and a Read that
	// starts past it fails at once, as the standard library's does. A
	// server that sets and clears the deadline around every request
	// (net/http: the header deadline, its background read's abort, the
	// idle deadline) then arms the runtime's deadline timer only for the
	// wait that needs it, where every set was a timer change and a clock
	// read before. The bounds are the same: a Read never parks under
	// another deadline than the last one set, and never reads past it.
	dmu     sync.Mutex
	rdWant  time.Time // the read deadline last set (dmu)
	rdFD    time.Time // the read deadline the descriptor has (dmu)
	reading bool      // a Read is under way: deadlines apply at once (dmu)
	timeout error     // a Read's answer past its deadline, built once (rmu)
}

// BoundWrites implements WriteBounder.
func (c *rawConn) BoundWrites(d time.Duration) { c.bound.Store(int64(d)) }

func (c *rawConn) SetWriteDeadline(t time.Time) error {
	c.explicit.Store(!t.IsZero())
	return c.setWriteFD(t)
}

// setWriteFD gives the descriptor write deadline t, unless both t and the
// descriptor's are none.
func (c *rawConn) setWriteFD(t time.Time) error {
	if t.IsZero() {
		if !c.wdFD.Load() {
			return nil
		}
		err := c.Conn.SetWriteDeadline(t)
		if err == nil {
			c.wdFD.Store(false)
		}
		return err
	}
	c.wdFD.Store(true)
	return c.Conn.SetWriteDeadline(t)
}

func (c *rawConn) SetDeadline(t time.Time) error {
	c.explicit.Store(!t.IsZero())
	if err := c.setWriteFD(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

// SetReadDeadline implements net.Conn. The deadline reaches the
// descriptor at once only while a Read is under way; otherwise the next
// Read applies it before it parks (see rawConn.rdWant). Unlike the
// standard library's, it does not report a closed connection (the next
// Read does).
func (c *rawConn) SetReadDeadline(t time.Time) error {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	c.rdWant = t
	if c.reading {
		return c.armRead()
	}
	return nil
}

// armRead readies the descriptor for a Read to wait under the read
// deadline last set. It leaves the descriptor's own deadline when that
// one ends the wait no later and has not passed yet; otherwise it gives
// the descriptor the deadline last set. The caller holds dmu.
func (c *rawConn) armRead() error {
	if !c.rdFD.IsZero() && (c.rdWant.IsZero() || c.rdFD.Before(c.rdWant)) && time.Now().Before(c.rdFD) {
		return nil
	}
	return c.applyReadDeadline()
}

// applyReadDeadline gives the descriptor the read deadline last set. The
// caller holds dmu.
func (c *rawConn) applyReadDeadline() error {
	if c.rdFD.Equal(c.rdWant) {
		return nil
	}
	err := c.Conn.SetReadDeadline(c.rdWant)
	if err == nil {
		c.rdFD = c.rdWant
	}
	return err
}

func wrap(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	if _, ok := c.LocalAddr().(*net.TCPAddr); !ok {
		return c // only stream sockets: a read of 0 bytes is the end
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	r := &rawConn{Conn: c, rc: rc}
	r.readFn = r.doRead
	r.writeFn = r.doWrite
	return r
}

// Read implements net.Conn like the standard library's (*net.TCPConn).Read:
// a zero-length read returns at once, the end of the stream is io.EOF.
func (c *rawConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(p) > maxRW {
		p = p[:maxRW]
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.dmu.Lock()
	if !c.rdWant.IsZero() && !time.Now().Before(c.rdWant) {
		// Past its deadline: fail before reading, as the standard
		// library does, without telling the descriptor (a server's
		// abort of its own background read lands here).
		c.dmu.Unlock()
		return 0, c.timeoutErr()
	}
	c.reading = true
	c.dmu.Unlock()
	c.rbuf, c.rn, c.rerr = p, 0, nil
	c.flushLater = false
	var err error
	for {
		err = c.rc.Read(c.readFn)
		if c.flushRead {
			// Nothing to read: send the held writes before waiting.
			// A failure fails later writes; the read goes on and
			// meets the socket's state itself.
			c.flushRead = false
			c.Flush()
			if c.pending.Load() {
				c.flushLater = true // a flusher has it: wait
			}
			continue
		}
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || !c.staleDeadline() {
			break
		}
	}
	n, rerr := c.rn, c.rerr
	c.rbuf, c.rerr = nil, nil
	c.dmu.Lock()
	c.reading = false
	c.dmu.Unlock()
	if err != nil { // closed, or the read deadline passed
		return 0, err
	}
	return n, rerr
}

// staleDeadline reports whether a Read's timeout came from a deadline the
// descriptor kept after a later SetReadDeadline replaced it (the Read
// waited under it, see armRead, or it passed while no Read was waiting and
// failed this Read before its first read). It gives the descriptor the
// current deadline, and the Read tries again.
func (c *rawConn) staleDeadline() bool {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	if c.rdFD.Equal(c.rdWant) {
		return false
	}
	return c.applyReadDeadline() == nil
}

// timeoutErr is what a Read past its deadline returns: the standard
// library's error (os.ErrDeadlineExceeded, a net.Error whose Timeout is
// true), built once per connection. The caller holds rmu.
func (c *rawConn) timeoutErr() error {
	if c.timeout == nil {
		c.timeout = &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.ErrDeadlineExceeded}
	}
	return c.timeout
}

func (c *rawConn) doRead(fd uintptr) bool {
	for {
		n, errno := sysRead(fd, c.rbuf)
		switch errno {
		case 0:
			c.rn = int(n)
			if n == 0 {
				c.rerr = io.EOF
			}
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			if c.pending.Load() && !c.flushLater {
				c.flushRead = true
				return true
			}
			// Park until the poller says the socket is readable, for
			// no longer than the deadline last set allows.
			c.dmu.Lock()
			err := c.armRead()
			c.dmu.Unlock()
			if err != nil {
				c.rerr = err
				return true
			}
			return false
		default:
			c.rerr = &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", errno)}
			return true
		}
	}
}

// Write implements net.Conn: all of p is written (or held, see
// WriteHolder), or an error says why not.
func (c *rawConn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.heldErr != nil {
		return 0, c.heldErr
	}
	hold := c.hold.Load()
	if len(c.held)+len(p) <= heldMax && (hold || len(c.held) > 0) {
		c.held = append(c.held, p...)
		if hold {
			c.pending.Store(true)
			return len(p), nil
		}
		if err := c.sendHeld(); err != nil { // what was held, p behind it
			return 0, err
		}
		return len(p), nil
	}
	if err := c.sendHeld(); err != nil {
		return 0, err
	}
	return c.write(p)
}

// write writes all of p. The caller holds wmu.
func (c *rawConn) write(p []byte) (int, error) {
	c.wbuf, c.wn, c.werr = p, 0, nil
	err := c.rc.Write(c.writeFn)
	n, werr := c.wn, c.werr
	c.wbuf, c.werr = nil, nil
	if c.armed {
		c.armed = false
		if !c.explicit.Load() {
			c.setWriteFD(time.Time{})
		}
	}
	if err != nil { // closed, or the write deadline passed
		return n, err
	}
	return n, werr
}

// HoldWrites implements WriteHolder.
func (c *rawConn) HoldWrites(on bool) { c.hold.Store(on) }

// Flush implements WriteHolder. It does not wait for another writer: a
// Write waiting for room must not keep the reader from reading (its peer
// may be waiting for that before it reads). Every holder of wmu but a
// held Write sends what is held before it lets go; so when wmu is taken,
// what is held is left to a goroutine only if no flusher is waiting for
// wmu already (one that is will send it).
func (c *rawConn) Flush() {
	if !c.pending.Load() {
		return
	}
	if c.wmu.TryLock() {
		c.sendHeld()
		c.wmu.Unlock()
		return
	}
	if c.flushing.CompareAndSwap(false, true) {
		go func() {
			c.wmu.Lock()
			c.flushing.Store(false) // from here on, held bytes need another flusher
			c.sendHeld()
			c.wmu.Unlock()
		}()
	}
}

// sendHeld writes what is held. The caller holds wmu.
func (c *rawConn) sendHeld() error {
	if len(c.held) == 0 {
		return c.heldErr
	}
	_, err := c.write(c.held)
	c.dropHeld()
	if err != nil {
		c.heldErr = err
	}
	return err
}

// dropHeld empties what is held, once sent. The caller holds wmu.
func (c *rawConn) dropHeld() {
	if cap(c.held) > heldKeep {
		c.held = nil // a burst's buffer is not kept for the socket's life
	} else {
		c.held = c.held[:0]
	}
	c.pending.Store(false)
}

// Close implements net.Conn. What is held gets one try that does not
// wait for room (a writer waiting for room holds wmu: Close is what ends
// its wait, so it must not wait for that writer either).
func (c *rawConn) Close() error {
	if c.pending.Load() && c.wmu.TryLock() {
		if len(c.held) > 0 {
			c.rc.Write(func(fd uintptr) bool {
				sysWrite(fd, c.held)
				return true
			})
			c.dropHeld()
		}
		c.wmu.Unlock()
	}
	return c.Conn.Close()
}

func (c *rawConn) doWrite(fd uintptr) bool {
	for c.wn < len(c.wbuf) {
		b := c.wbuf[c.wn:]
		if len(b) > maxRW {
			b = b[:maxRW]
		}
		n, errno := sysWrite(fd, b)
		switch errno {
		case 0:
			if n == 0 {
				c.werr = io.ErrUnexpectedEOF
				return true
			}
			c.wn += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			// Park until the socket has room, for at most bound.
			if d := time.Duration(c.bound.Load()); d > 0 && !c.armed && !c.explicit.Load() {
				c.armed = true
				c.setWriteFD(time.Now().Add(d))
			}
			return false
		default:
			c.werr = &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("write", errno)}
			return true
		}
	}
	return true
}

// ReadFrom lets the wrapped connection copy from r its own way (a
// *net.TCPConn sends a file with sendfile); it holds the write lock, as a
// Write does.
func (c *rawConn) ReadFrom(r io.Reader) (int64, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.sendHeld(); err != nil {
		return 0, err
	}
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c.Conn}, r)
}

// CloseWrite shuts the sending side, where the wrapped connection can.
func (c *rawConn) CloseWrite() error {
	c.wmu.Lock()
	c.sendHeld()
	c.wmu.Unlock()
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// writerOnly hides every method but Write (io.Copy must not call ReadFrom
// again).
type writerOnly struct{ io.Writer }
