package hubmcp

import (
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
)

// A failed adapter the hub retries (its port is busy) is looked at again:
// it comes up once the port frees. One that crash-looped is not.
func TestSettledAndWhyOfAFailedAdapter(t *testing.T) {
	retrying := adapters.Status{Name: "aiui", State: adapters.StateFailed,
		LastError: "cannot listen on 127.0.0.1:8686: address already in use",
		Fix:       "free port 8686, set adapters.aiui.port to a free port (0: any), or set adapters.aiui.enabled: false to run the hub without it",
		RetryAt:   time.Unix(1e9, 0)}
	for _, tc := range []struct {
		name    string
		a       adapters.Status
		settled bool
		why     []string
	}{
		{"retrying", retrying, false, []string{"is failed", "address already in use", "fix: free port 8686", "adapters.aiui.port"}},
		{"crash loop", adapters.Status{Name: "aiui", State: adapters.StateFailed, LastError: "panic: boom"}, true, []string{"is failed (panic: boom)"}},
		{"disabled", adapters.Status{Name: "aiui", State: adapters.StateDisabled}, true, []string{"disabled in the hub's config"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := settled(tc.a, true); got != tc.settled {
				t.Errorf("settled = %v, want %v", got, tc.settled)
			}
			why := notRunning("aiui", tc.a, true)
			for _, w := range tc.why {
				if !strings.Contains(why, w) {
					t.Errorf("why %q does not say %q", why, w)
				}
			}
		})
	}
}
