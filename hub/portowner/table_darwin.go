package portowner

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// system answers from the kernel's TCP socket list, which sysctl gives
// anyone (pcblist.go reads it).
func system() source { return tableSource(scanTables) }

// scanTables reads net.inet.tcp.pcblist_n: every user's TCP sockets, IPv4
// and IPv6, with their owners' uids. A kernel without it is ErrUnknown.
func scanTables(visit func(Socket) bool) error {
	b, err := unix.SysctlRaw("net.inet.tcp.pcblist_n")
	if errors.Is(err, syscall.ENOENT) {
		return ErrUnknown
	}
	if err != nil {
		return err
	}
	return parsePCBList(b, MaxRows, visit)
}

// findProcess names the process whose pid a socket's Inode holds on macOS
// (the pid that last used it, see parsePCBList); 0 when it is gone.
func findProcess(pid uint64) (int, string) {
	if pid == 0 || pid > 1<<31-1 {
		return 0, ""
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", int(pid))
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return 0, ""
	}
	comm := kp.Proc.P_comm[:]
	for i, c := range comm {
		if c == 0 {
			comm = comm[:i]
			break
		}
	}
	return int(pid), printable(string(comm))
}
