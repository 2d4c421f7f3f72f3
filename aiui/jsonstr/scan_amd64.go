package jsonstr

import "golang.org/x/sys/cpu"

// plainRun skips plain ASCII and one-letter escapes from the start of b:
// b[i] is the first byte it did not consume (special, or among the last
// 15), and shrink is how many escapes it consumed (each decodes to one
// byte less than it takes). In assembly: 64 bytes a step with AVX2, then
// sixteen with SSE2.
//
//go:noescape
func plainRun(b []byte) (i, shrink int)

// useAVX2 is read by plainRun.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasPOPCNT
