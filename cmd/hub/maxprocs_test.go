package main

import (
	"io"
	"os"
	"runtime"
	"testing"
)

// TestSetMaxProcs: the default caps the runtime's own reading at
// defaultMaxProcs, runtime.max_procs replaces it, and GOMAXPROCS in the
// environment (a positive number, as the runtime reads it) wins over
// both, changing nothing.
func TestSetMaxProcs(t *testing.T) {
	orig := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(orig) })
	runtime.SetDefaultGOMAXPROCS()
	machine := runtime.GOMAXPROCS(0)

	for _, tt := range []struct {
		name       string
		env        string
		inEffect   int // GOMAXPROCS as the runtime set it at start
		configured int
		want       int
		from       string
	}{
		{"default", "", 7, 0, min(defaultMaxProcs, machine), "default"},
		{"configured", "", 7, 3, 3, "config"},
		{"configured above the cores", "", 1, 64, 64, "config"},
		{"environment wins", "5", 5, 3, 5, "GOMAXPROCS"},
		{"environment over the default", "5", 5, 0, 5, "GOMAXPROCS"},
		// The runtime ignores a value that is not a positive number.
		{"environment not a number", "lots", 7, 0, min(defaultMaxProcs, machine), "default"},
		{"environment zero", "0", 7, 3, 3, "config"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOMAXPROCS", tt.env) // empty is unset to the runtime
			runtime.GOMAXPROCS(tt.inEffect)
			n, from := setMaxProcs(tt.configured)
			if n != tt.want || from != tt.from || runtime.GOMAXPROCS(0) != tt.want {
				t.Fatalf("setMaxProcs(%d) = %d from %s, in effect %d; want %d from %s", tt.configured, n, from, runtime.GOMAXPROCS(0), tt.want, tt.from)
			}
		})
	}
}

// TestEveryCommandTakesTheDefault: the process entry point applies the
// default before any command runs, so a standalone bridge (`hub pixelle
// serve`, which reads no hub config) runs with it too.
func TestEveryCommandTakesTheDefault(t *testing.T) {
	orig := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(orig) })
	runtime.SetDefaultGOMAXPROCS()
	want := min(defaultMaxProcs, runtime.GOMAXPROCS(0))
	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(7)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	code := hubMain([]string{"hub", "version"})
	os.Stdout = stdout
	w.Close()
	io.Copy(io.Discard, r)
	r.Close()
	if code != 0 || runtime.GOMAXPROCS(0) != want {
		t.Fatalf("hub version: exit %d, GOMAXPROCS %d; want 0 and %d", code, runtime.GOMAXPROCS(0), want)
	}
}
