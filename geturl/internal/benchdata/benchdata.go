// Package benchdata makes the source files and the 20-hunk apply_patch the
// mutation benchmarks share (the file engine's and the end-to-end route's),
// so both measure the same work.
package benchdata

import (
	"fmt"
	"strings"
)

// Source is a Go-like file of n functions (about 40 bytes a line).
func Source(file, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package p%d\n\n", file)
	for i := range n {
		fmt.Fprintf(&b, "func f%d_%d(ctx context.Context, v int) error {\n", file, i)
		fmt.Fprintf(&b, "\tif err := step(ctx, v, %d); err != nil {\n\t\treturn err\n\t}\n", i)
		fmt.Fprintf(&b, "\tlog.Printf(\"done %d\", v)\n\treturn nil\n}\n\n", i)
	}
	return b.String()
}

// Patch changes 4 functions in each of 5 files src/file<N>.go made by
// Source (20 hunks); reverse swaps old and new so a benchmark can
// alternate and really write each time.
func Patch(reverse bool) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for f := range 5 {
		fmt.Fprintf(&b, "*** Update File: src/file%d.go\n", f)
		for _, fn := range []int{3, 11, 19, 27} {
			from, to := fmt.Sprintf("done %d", fn), fmt.Sprintf("finished %d", fn)
			if reverse {
				from, to = to, from
			}
			fmt.Fprintf(&b, "@@ func f%d_%d(ctx context.Context, v int) error {\n", f, fn)
			fmt.Fprintf(&b, " \tif err := step(ctx, v, %d); err != nil {\n \t\treturn err\n \t}\n", fn)
			fmt.Fprintf(&b, "-\tlog.Printf(\"%s\", v)\n+\tlog.Printf(\"%s\", v)\n \treturn nil\n", from, to)
		}
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}
