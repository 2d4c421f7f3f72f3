package reaper

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// FuzzParseStat: a process names itself (prctl PR_SET_NAME: up to 15
// bytes, any but NUL — spaces, ")", newlines), and that name sits inside
// the stat line the reaper reads to decide whom to signal. Whatever the
// name, the fields after it come out as the kernel wrote them; and no
// line, however malformed, panics or is taken with numbers it lacks.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("sh"), byte('S'), int32(1), int32(2), int32(3), []byte("0 -1 4194560"))
	f.Add([]byte(") Z 1 1 1 ("), byte('R'), int32(7), int32(7), int32(7), []byte(""))
	f.Add([]byte("a\nb ) ) 9"), byte('Z'), int32(-1), int32(0), int32(2147483647), []byte("x"))
	f.Fuzz(func(t *testing.T, comm []byte, state byte, ppid, pgrp, sid int32, tail []byte) {
		if _, ok := parseStat(5, append(comm, tail...)); ok && bytes.IndexByte(append(comm, tail...), ')') < 0 {
			t.Fatal("a line without a name was taken")
		}
		if len(comm) > 15 || bytes.IndexByte(comm, 0) >= 0 || state <= ' ' || state >= 0x7f || state == ')' || bytes.ContainsAny(tail, ")") {
			return
		}
		line := fmt.Appendf(nil, "5 (%s) %c %d %d %d %s\n", comm, state, ppid, pgrp, sid, tail)
		p, ok := parseStat(5, line)
		if !ok || p.pid != 5 || p.ppid != int(ppid) || p.pgrp != int(pgrp) || p.session != int(sid) ||
			p.dead != (state == 'Z' || state == 'X') {
			t.Fatalf("%q parsed as %+v, %v", line, p, ok)
		}
	})
}

// The live file parses too: this process's parent and group as the
// kernel reports them.
func TestReadStatSelf(t *testing.T) {
	p, ok := readStat(os.Getpid())
	if !ok || p.ppid != os.Getppid() || p.pgrp != syscall.Getpgrp() || p.dead {
		t.Fatalf("%+v, %v", p, ok)
	}
}
