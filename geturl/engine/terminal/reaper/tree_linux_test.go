package reaper

import "fmt"

// addSources adds /proc/PID/stat lines, each with a name that would
// confuse a naive parser.
func addSources(s map[string]func([]row) []proc) {
	s["procstat"] = func(rows []row) []proc {
		var out []proc
		for _, r := range rows {
			state := 'S'
			if r.zombie {
				state = 'Z'
			}
			line := fmt.Sprintf("%d (a) %c 9 (b) %c %d %d %d 34816 0 4194560\n", r.pid, state, state, r.ppid, r.pgrp, r.sid)
			p, ok := parseStat(r.pid, []byte(line))
			if !ok {
				panic(line)
			}
			out = append(out, p)
		}
		return out
	}
}
