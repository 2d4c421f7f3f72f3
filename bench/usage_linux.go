package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

func readUsage(pid int) (Usage, error) {
	var u Usage
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return u, err
	}
	// The fields after the command's closing paren: utime and stime are
	// the 12th and 13th of them.
	f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
	if len(f) < 15 {
		return u, fmt.Errorf("bench: %s/stat: %d fields", dir, len(f))
	}
	ut, _ := strconv.ParseInt(string(f[11]), 10, 64)
	st, _ := strconv.ParseInt(string(f[12]), 10, 64)
	cut, _ := strconv.ParseInt(string(f[13]), 10, 64)
	cst, _ := strconv.ParseInt(string(f[14]), 10, 64)
	u.Children = time.Duration(cut+cst) * clockTick
	u.CPU = time.Duration(ut+st)*clockTick + u.Children
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return u, err
	}
	u.RSSKiB = statusField(status, "VmRSS:")
	u.HWMKiB = statusField(status, "VmHWM:")
	u.AnonKiB = statusField(status, "RssAnon:")
	u.FileKiB = statusField(status, "RssFile:")
	tasks, _ := filepath.Glob(dir + "/task/*")
	for _, t := range tasks {
		if s, err := os.ReadFile(t + "/status"); err == nil {
			u.Switches += statusField(s, "voluntary_ctxt_switches:") + statusField(s, "nonvoluntary_ctxt_switches:")
		}
		if s, err := os.ReadFile(t + "/schedstat"); err == nil {
			if ff := bytes.Fields(s); len(ff) > 0 {
				ns, _ := strconv.ParseInt(string(ff[0]), 10, 64)
				u.Run += time.Duration(ns)
			}
		}
	}
	return u, nil
}

// statusField is the first number after a line's key in a /proc status file.
func statusField(status []byte, key string) int64 {
	for line := range bytes.Lines(status) {
		if rest, ok := bytes.CutPrefix(line, []byte(key)); ok {
			if ff := bytes.Fields(rest); len(ff) > 0 {
				n, _ := strconv.ParseInt(string(ff[0]), 10, 64)
				return n
			}
		}
	}
	return 0
}
