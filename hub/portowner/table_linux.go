package portowner

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"strconv"
)

// system answers from sock_diag, and from /proc/net/tcp{,6} where
// sock_diag cannot (no netlink in a sandbox, no TCP sock_diag in the
// kernel, or an error).
func system() source {
	return fallback{first: netlinkSource{}, then: tableSource(scanTables)}
}

// tables are the kernel's TCP socket tables, IPv4 then IPv6. They list
// the sockets of every user of this network namespace, with their uid,
// readable by anyone.
var tables = []string{"/proc/net/tcp", "/proc/net/tcp6"}

// scanTables reads /proc/net/tcp and /proc/net/tcp6. A missing tcp6 is a
// kernel without IPv6; with neither, /proc is not mounted (ErrUnknown).
func scanTables(visit func(Socket) bool) error {
	missing := 0
	more := true
	for _, name := range tables {
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			missing++
			continue
		}
		if err != nil {
			return err
		}
		err = parseTable(f, binary.NativeEndian, MaxRows, func(s Socket) bool {
			more = visit(s)
			return more
		})
		f.Close()
		if err != nil || !more {
			return err
		}
	}
	if missing == len(tables) {
		return ErrUnknown
	}
	return nil
}

// findProcess finds the process holding the socket inode among those
// whose descriptors this process may read (its own user's, or all as
// root); 0 when none is visible.
func findProcess(inode uint64) (pid int, command string) {
	want := "socket:[" + strconv.FormatUint(inode, 10) + "]"
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, ""
	}
	for _, p := range procs {
		n, err := strconv.Atoi(p.Name())
		if err != nil || n <= 0 {
			continue
		}
		dir := "/proc/" + p.Name() + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or another user's
		}
		for _, fd := range fds {
			if link, err := os.Readlink(dir + fd.Name()); err == nil && link == want {
				comm, _ := os.ReadFile("/proc/" + p.Name() + "/comm")
				return n, printable(string(comm))
			}
		}
	}
	return 0, ""
}
