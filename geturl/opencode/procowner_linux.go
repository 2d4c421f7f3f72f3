package opencode

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// errNoOwner means the listener's owner could not be found (no such
// listener, or its process is not visible to us).
var errNoOwner = errors.New("no visible process owns the listener")

// procListenerOwner implements ProcessOwner from /proc: the LISTEN socket
// for host:port in /proc/net/tcp{,6}, then the process holding that socket
// inode. Needs the server to run as the same user (or us as root), which a
// loopback OpenCode started by the user does.
func procListenerOwner(host string, port int) (int, string, error) {
	ip := net.ParseIP(host)
	if host == "localhost" {
		ip = nil // either family
	}
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if err := listenInodes(f, ip, port, inodes); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, "", err
		}
	}
	if len(inodes) == 0 {
		return 0, "", errNoOwner
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, "", err
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				start, err := procStart(pid)
				if err != nil {
					return 0, "", err
				}
				return pid, start, nil
			}
		}
	}
	return 0, "", errNoOwner
}

// listenInodes adds the inodes of LISTEN sockets on port (and ip, when not
// nil) found in one /proc/net table.
func listenInodes(file string, ip net.IP, port int, out map[string]bool) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" { // 0A = TCP_LISTEN
			continue
		}
		addr, p, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(p, 16, 16)
		if err != nil || int(n) != port {
			continue
		}
		if ip != nil {
			lip := decodeProcIP(addr)
			if lip == nil || !(lip.Equal(ip) || lip.IsUnspecified()) {
				continue
			}
		}
		if fields[9] != "0" {
			out[fields[9]] = true
		}
	}
	return sc.Err()
}

// decodeProcIP decodes /proc/net's hex address: 32-bit words in host
// (little-endian on every Linux Go supports here) byte order.
func decodeProcIP(h string) net.IP {
	if len(h) != 8 && len(h) != 32 {
		return nil
	}
	b := make([]byte, len(h)/2)
	for i := range b {
		v, err := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
		if err != nil {
			return nil
		}
		b[i] = byte(v)
	}
	for w := 0; w+4 <= len(b); w += 4 {
		b[w], b[w+1], b[w+2], b[w+3] = b[w+3], b[w+2], b[w+1], b[w]
	}
	return net.IP(b)
}

// procStart is field 22 of /proc/<pid>/stat, the start time in clock
// ticks since boot: with the pid it names one process for the machine's
// uptime.
func procStart(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return "", errNoOwner
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", errNoOwner
	}
	return f[19], nil
}
