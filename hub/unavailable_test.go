package hub

import (
	"strings"
	"testing"
)

func TestUnavailableOn(t *testing.T) {
	if got := UnavailableOn("linux"); len(got) != 0 {
		t.Fatalf("linux lists %q", got)
	}
	for goos, want := range map[string][]string{
		"darwin":  {"memory hiding"},
		"windows": {"memory hiding", "terminates the verified process"},
		"freebsd": {"memory hiding", "process identity"},
	} {
		got := strings.Join(UnavailableOn(goos), "\n")
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q does not say %q", goos, got, w)
			}
		}
	}
}
