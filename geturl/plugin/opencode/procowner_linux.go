package opencode

import (
	"fmt"
	"os"
	"strings"
)

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
