package hub

import (
	"bytes"
	"errors"
	"strings"
)

// Process identity, for `hub stop`, `hub status` and the pid checks of
// the bridges: is a pid alive, what does it run, when did it start, and
// who holds a lock. Each OS answers in its own file (/proc on Linux,
// sysctl kern.proc on macOS, process handles on Windows); the parsers of
// what the kernel hands back are here, portable, and tested on Linux.

// ErrNoLockTable is FlockHolders' answer where the OS does not list who
// holds a file lock (everywhere but Linux): the caller identifies the
// lock's holder another way (see supervisor.VerifyHub).
var ErrNoLockTable = errors.New("this OS does not list the holders of a file lock")

// ErrNoProcessInfo is what ProcessCommand and ProcessStart return where
// the OS offers no way this package knows to read them.
var ErrNoProcessInfo = errors.New("this OS does not show another process's command and start time")

// statStartTime reads field 22 (starttime) of a /proc/<pid>/stat line.
// The command name (field 2) is in parentheses and may itself hold
// spaces and parentheses, so fields are counted from the last ")".
func statStartTime(b []byte) (string, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", errors.New("malformed stat line")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field 22 is f[19].
	if len(f) < 20 || strings.Trim(f[19], "0123456789") != "" || f[19] == "" {
		return "", errors.New("malformed stat line")
	}
	return f[19], nil
}

// maxProcArgs bounds what parseProcArgs2 reads: the kernel's own limit
// on argv and environment together (ARG_MAX) is 1 MiB on macOS.
const maxProcArgs = 1 << 20

// parseProcArgs2 reads macOS's kern.procargs2 buffer: a native-endian
// int32 argc, the executable's path, NUL padding, then argc
// NUL-terminated arguments (the environment follows and is not read).
func parseProcArgs2(b []byte) (exe string, argv []string, err error) {
	if len(b) < 4 || len(b) > maxProcArgs {
		return "", nil, errors.New("malformed procargs2")
	}
	// Both macOS targets (amd64, arm64) are little-endian.
	argc := int(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
	rest := b[4:]
	end := bytes.IndexByte(rest, 0)
	if end < 0 {
		return "", nil, errors.New("malformed procargs2: no end to the executable path")
	}
	exe, rest = string(rest[:end]), rest[end:]
	for len(rest) > 0 && rest[0] == 0 {
		rest = rest[1:]
	}
	if argc < 0 || argc > len(rest) {
		return "", nil, errors.New("malformed procargs2: bad argument count")
	}
	for range argc {
		end := bytes.IndexByte(rest, 0)
		if end < 0 {
			return "", nil, errors.New("malformed procargs2: an argument has no end")
		}
		argv = append(argv, string(rest[:end]))
		rest = rest[end+1:]
	}
	return exe, argv, nil
}
