package rawio

import (
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

	// bound limits how long a Write may wait for room, counted from its
	// first wait: the write deadline is set only then, and cleared when
	// the Write returns, so a write that finds room at once (nearly every
	// frame) touches no deadline. An explicit write deadline
	// (SetWriteDeadline, SetDeadline) takes precedence while it is set.
	bound    atomic.Int64 // time.Duration; 0: unbounded
	explicit atomic.Bool
}

// BoundWrites implements WriteBounder.
func (c *rawConn) BoundWrites(d time.Duration) { c.bound.Store(int64(d)) }

func (c *rawConn) SetWriteDeadline(t time.Time) error {
	c.explicit.Store(!t.IsZero())
	return c.Conn.SetWriteDeadline(t)
}

func (c *rawConn) SetDeadline(t time.Time) error {
	c.explicit.Store(!t.IsZero())
	return c.Conn.SetDeadline(t)
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
	c.rbuf, c.rn, c.rerr = p, 0, nil
	err := c.rc.Read(c.readFn)
	n, rerr := c.rn, c.rerr
	c.rbuf, c.rerr = nil, nil
	c.rmu.Unlock()
	if err != nil { // closed, or the read deadline passed
		return 0, err
	}
	return n, rerr
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
			return false // park until the poller says the socket is readable
		default:
			c.rerr = &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", errno)}
			return true
		}
	}
}

// Write implements net.Conn: all of p is written, or an error says why not.
func (c *rawConn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.wmu.Lock()
	c.wbuf, c.wn, c.werr = p, 0, nil
	err := c.rc.Write(c.writeFn)
	n, werr := c.wn, c.werr
	c.wbuf, c.werr = nil, nil
	if c.armed {
		c.armed = false
		if !c.explicit.Load() {
			c.Conn.SetWriteDeadline(time.Time{})
		}
	}
	c.wmu.Unlock()
	if err != nil { // closed, or the write deadline passed
		return n, err
	}
	return n, werr
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
				c.Conn.SetWriteDeadline(time.Now().Add(d))
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
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c.Conn}, r)
}

// CloseWrite shuts the sending side, where the wrapped connection can.
func (c *rawConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// writerOnly hides every method but Write (io.Copy must not call ReadFrom
// again).
type writerOnly struct{ io.Writer }
