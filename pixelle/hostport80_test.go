package pixelle

import (
	"net/http"
	"testing"
)

// On port 80 a browser (and curl) sends Host: 127.0.0.1 — URLs drop the
// scheme's default port — so that is the relay's own host there; on any
// other port the port must be named.
func TestHostAllowedDefaultPort(t *testing.T) {
	for _, tc := range []struct {
		host string
		port int
		ok   bool
	}{
		{"127.0.0.1:80", 80, true},
		{"127.0.0.1", 80, true},
		{"127.0.0.1:4317", 4317, true},
		{"127.0.0.1", 4317, false},
		{"127.0.0.1:80", 4317, false},
		{"localhost", 80, false},
		{"127.0.0.1:", 80, false},
	} {
		if got := hostAllowed(&http.Request{Host: tc.host}, tc.port); got != tc.ok {
			t.Errorf("Host %q on port %d: allowed %v, want %v", tc.host, tc.port, got, tc.ok)
		}
	}
}
