//go:build linux || darwin

package journal

import (
	"os"

	"golang.org/x/sys/unix"
)

// maxIOV stays within every system's IOV_MAX (1024 on Linux and macOS).
const maxIOV = 1024

// writeVecAt writes bufs one after another at off with pwritev (one
// system call per maxIOV pieces, more only after a short write) and
// returns the bytes written. It neither uses nor moves f's offset.
func writeVecAt(f *os.File, bufs [][]byte, off int64) (int64, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var total int64
	for len(bufs) > 0 {
		batch := bufs[:min(len(bufs), maxIOV)]
		var n int
		var werr error
		if err := rc.Write(func(fd uintptr) bool {
			n, werr = unix.Pwritev(int(fd), batch, off+total)
			return werr != unix.EAGAIN
		}); err != nil {
			return total, err
		}
		if werr == unix.EINTR {
			continue
		}
		if werr != nil {
			return total, &os.PathError{Op: "pwritev", Path: f.Name(), Err: werr}
		}
		if n == 0 {
			return total, &os.PathError{Op: "pwritev", Path: f.Name(), Err: unix.EIO}
		}
		total += int64(n)
		bufs = advance(bufs, n)
	}
	return total, nil
}
