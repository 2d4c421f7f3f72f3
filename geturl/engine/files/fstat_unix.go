//go:build unix

package files

import (
	"golang.org/x/sys/unix"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// fstat says what fd is open on, its size and its modification time.
func fstat(fd sandbox.FD) (fileStat, error) {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(fd, &st) }); err != nil {
		return fileStat{}, err
	}
	s := fileStat{size: st.Size, mtime: st.Mtim.Nano()}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		s.kind = statDir
	case unix.S_IFREG:
		s.kind = statRegular
	}
	return s, nil
}
