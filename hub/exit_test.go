package hub

import (
	"errors"
	"fmt"
	"testing"
)

type codedErr struct{ code int }

func (e codedErr) Error() string { return "coded" }
func (e codedErr) ExitCode() int { return e.code }

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"plain error", errors.New("boom"), ExitFailed},
		{"Exit", Exit(ExitNotRunning, "gone"), ExitNotRunning},
		{"wrapped Exit", fmt.Errorf("ctx: %w", Exit(ExitUsage, "bad flag")), ExitUsage},
		{"typed client error", fmt.Errorf("ctx: %w", codedErr{ExitNotRunning}), ExitNotRunning},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("%s: ExitCode = %d, want %d", tc.name, got, tc.want)
		}
	}
	if msg := Exit(ExitFailed, "refused").Error(); msg != "refused" {
		t.Errorf("message = %q", msg)
	}
}
