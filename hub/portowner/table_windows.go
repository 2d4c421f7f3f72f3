package portowner

import (
	"errors"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/windows"
)

// system answers from GetExtendedTcpTable (mibtable.go reads it).
func system() source { return tableSource(scanTables) }

const (
	tcpTableOwnerPIDAll = 5 // TCP_TABLE_OWNER_PID_ALL
	// maxTableBytes bounds one table: MaxRows rows of the larger (IPv6)
	// kind.
	maxTableBytes = 4 + MaxRows*mibRow6Len
)

// foreignUID is the UID of a socket whose owning process is not this
// user's, or cannot be shown to be (another user's process this one may
// not open, a system process): anything but os.Getuid(), which is -1 on
// Windows, so Owner.Mine says no.
const foreignUID = -2

var procGetExtendedTcpTable = windows.NewLazySystemDLL("iphlpapi.dll").NewProc("GetExtendedTcpTable")

// scanTables reads the IPv4 and the IPv6 TCP tables. A socket's UID is
// os.Getuid() when its owning pid runs as this process's user (the token
// user SIDs are equal), foreignUID otherwise; its Inode is the pid.
func scanTables(visit func(Socket) bool) error {
	if err := procGetExtendedTcpTable.Find(); err != nil {
		return ErrUnknown
	}
	me, err := currentUser()
	if err != nil {
		return err
	}
	owners := map[uint32]int{}
	ownerOf := func(pid uint32) int {
		uid, ok := owners[pid]
		if !ok {
			uid = foreignUID
			if sidOf(pid, me) {
				uid = os.Getuid()
			}
			owners[pid] = uid
		}
		return uid
	}
	more := true
	for _, af := range []uint32{windows.AF_INET, windows.AF_INET6} {
		b, err := extendedTCPTable(af)
		if err != nil {
			return err
		}
		err = parseMIBTable(b, af == windows.AF_INET6, MaxRows, ownerOf, func(s Socket) bool {
			more = visit(s)
			return more
		})
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// extendedTCPTable returns one GetExtendedTcpTable reply, growing the
// buffer as the call asks (the table can grow between calls).
func extendedTCPTable(af uint32) ([]byte, error) {
	size := uint32(16 << 10)
	for range 8 {
		if size > maxTableBytes {
			return nil, ErrTableTooLarge
		}
		buf := make([]byte, size)
		r, _, _ := procGetExtendedTcpTable.Call(uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&size)),
			0, uintptr(af), tcpTableOwnerPIDAll, 0)
		switch windows.Errno(r) {
		case 0:
			return buf, nil
		case windows.ERROR_INSUFFICIENT_BUFFER:
			size += size / 4 // room for what appears meanwhile
		default:
			return nil, windows.Errno(r)
		}
	}
	return nil, errors.New("tcp table: kept growing while read")
}

func currentUser() (*windows.SID, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, err
	}
	return u.User.Sid, nil
}

// sidOf reports whether pid runs as the user me. A process this one may
// not open or query is not shown to be ours, so it is not.
func sidOf(pid uint32, me *windows.SID) bool {
	if pid == 0 {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return false
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	return err == nil && u.User.Sid.Equals(me)
}

// findProcess names the process whose pid a socket's Inode holds on
// Windows; 0 when it cannot be opened.
func findProcess(pid uint64) (int, string) {
	if pid == 0 || pid > 1<<32-1 {
		return 0, ""
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return 0, ""
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		return int(pid), ""
	}
	return int(pid), printable(filepath.Base(windows.UTF16ToString(buf[:n])))
}
