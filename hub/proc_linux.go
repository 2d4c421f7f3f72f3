package hub

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// isZombie reads the process state from /proc/<pid>/stat.
func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state letter follows the ")" that closes the command name.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// FlockHolders returns the pids that /proc/locks shows holding a flock on
// the file fi describes (matched by device and inode, so a path swapped
// since it was locked does not match).
//
// Only Linux has such a table; elsewhere it is ErrNoLockTable.
func FlockHolders(fi os.FileInfo) ([]int, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, errors.New("no inode information")
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return nil, err
	}
	dev := uint64(st.Dev)
	// glibc's major()/minor() encoding of a dev_t; /proc/locks prints
	// them in hex.
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	want := strconv.FormatUint(major, 16) + ":" + strconv.FormatUint(minor, 16) + ":" + strconv.FormatUint(st.Ino, 10)
	var pids []int
	for _, line := range bytes.Split(b, []byte("\n")) {
		// "1: FLOCK  ADVISORY  WRITE 1234 fe:00:9982753 0 EOF"; waiters
		// are listed as "1: -> FLOCK …" and hold nothing.
		f := strings.Fields(string(line))
		if len(f) < 6 || f[1] != "FLOCK" {
			continue
		}
		if !sameDevIno(f[5], want) {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// sameDevIno compares "maj:min:ino" with hex fields of any zero padding.
func sameDevIno(got, want string) bool {
	g, w := strings.Split(got, ":"), strings.Split(want, ":")
	if len(g) != 3 || len(w) != 3 || g[2] != w[2] {
		return false
	}
	for i := range 2 {
		a, err1 := strconv.ParseUint(g[i], 16, 64)
		b, err2 := strconv.ParseUint(w[i], 16, 64)
		if err1 != nil || err2 != nil || a != b {
			return false
		}
	}
	return true
}

// ProcessCommand returns pid's executable (without the " (deleted)" the
// kernel appends once the file was replaced, as by a reinstall) and its
// argv.
//
// The kernel shows the executable only to whoever may ptrace the process,
// so a hub, undumpable since MakeUndumpable, hides it from its own user's
// other processes (root still sees it). For a process of our own user
// that hides it, exe is "" and err nil: the argv, which /proc shows of
// every process, is all there is to judge it by. A process of another
// user that hides it is an error, as is any other failure.
func ProcessCommand(pid int) (exe string, argv []string, err error) {
	dir := "/proc/" + strconv.Itoa(pid)
	exe, err = os.Readlink(dir + "/exe")
	switch {
	case err == nil:
		exe = strings.TrimSuffix(exe, " (deleted)")
	case errors.Is(err, fs.ErrPermission) && ownUndumpable(dir):
		exe = ""
	default:
		return "", nil, err
	}
	b, err := os.ReadFile(dir + "/cmdline")
	if err != nil {
		return exe, nil, err
	}
	for _, a := range bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0}) {
		argv = append(argv, string(a))
	}
	return exe, argv, nil
}

// ownUndumpable reports whether the process whose /proc directory is dir
// runs as our effective user and is undumpable: the kernel gives the
// directory the process's owner, but the files inside it root's once the
// process is undumpable.
func ownUndumpable(dir string) bool {
	d, err1 := os.Lstat(dir)
	l, err2 := os.Lstat(dir + "/exe")
	if err1 != nil || err2 != nil {
		return false
	}
	ds, ok1 := d.Sys().(*syscall.Stat_t)
	ls, ok2 := l.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && int(ds.Uid) == os.Geteuid() && ls.Uid != ds.Uid
}

// ProcessStart returns when pid started, as an opaque mark: the start
// time in clock ticks since boot (/proc/<pid>/stat field 22). With the
// pid it names one process, not whichever later reuses its number.
func ProcessStart(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	return statStartTime(b)
}
