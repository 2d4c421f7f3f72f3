package jsonstr

// plainRun skips, sixteen bytes at a time, plain ASCII and one-letter
// escapes from the start of b: b[i] is the first byte it did not consume
// (special, or among the last 15), and shrink is how many escapes it
// consumed (each decodes to one byte less than it takes). In assembly.
//
//go:noescape
func plainRun(b []byte) (i, shrink int)
