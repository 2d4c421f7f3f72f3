// Package inittrace measures what a package's initialisation costs, for
// tests that keep start-up cheap: every hub start and every CLI call pays
// each package's init, so an init that allocates is paid even by an idle
// hub that never uses the value.
//
// Measure re-runs the current test binary with GODEBUG=inittrace=1 and no
// tests, and reads the runtime's own line for the package. Test files of
// the package are part of its init, so package-level values built only for
// tests count too: keep them inside test functions.
package inittrace

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Cost is one package's initialisation as the runtime reports it.
type Cost struct {
	Bytes  int64 // heap bytes allocated by the package's init
	Allocs int64 // heap allocations made by it
}

// Measure returns the init cost of the package with import path pkg in the
// running test binary. A package with no init work has no line; its cost
// is zero.
func Measure(pkg string) (Cost, error) {
	exe, err := os.Executable()
	if err != nil {
		return Cost{}, err
	}
	cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return Cost{}, fmt.Errorf("inittrace: %v: %s", err, out)
	}
	return parse(out, pkg)
}

// parse reads lines of the form
//
//	init PKG @0.5 ms, 0.1 ms clock, 1234 bytes, 5 allocs
func parse(out []byte, pkg string) (Cost, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "init "+pkg+" @")
		if !ok {
			continue
		}
		var c Cost
		_, after, _ := strings.Cut(rest, "clock, ")
		if _, err := fmt.Sscanf(after, "%d bytes, %d allocs", &c.Bytes, &c.Allocs); err != nil {
			return Cost{}, fmt.Errorf("inittrace: cannot read %q: %v", sc.Text(), err)
		}
		return c, nil
	}
	return Cost{}, sc.Err()
}

// TB is the part of testing.TB that Bound uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Bound fails t when pkg's init allocates more than maxBytes.
func Bound(t TB, pkg string, maxBytes int64) {
	t.Helper()
	c, err := Measure(pkg)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if c.Bytes > maxBytes {
		t.Fatalf("init of %s allocates %d bytes in %d allocations; want at most %d bytes: build big values on first use", pkg, c.Bytes, c.Allocs, maxBytes)
	}
}
