package pixelle

import (
	"net/http"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// TestOriginExactlyWebsite is issue 15 row 3: the contract allows exactly
// WEBSITE, and browsers send the canonical form, so a trailing slash, an
// upper-case spelling or an explicit default port is refused on every route
// and on the relay upgrade.
func TestOriginExactlyWebsite(t *testing.T) {
	r := startRelay(t, nil)
	for _, origin := range []string{website + "/", "https://PIXELLE.example", "HTTPS://pixelle.example", website + ":443"} {
		for _, path := range []string{"/health", "/api/sessions"} {
			method := "GET"
			if path == "/api/sessions" {
				method = "POST"
			}
			resp := r.Do(adaptertest.Request{Method: method, Path: path, Header: http.Header{"Origin": {origin}}})
			if resp.Status != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("%s %s with Origin %q: %d (ACAO %q), want 403 without CORS", method, path, origin, resp.Status, resp.Header.Get("Access-Control-Allow-Origin"))
			}
		}
		c, err := r.Dial("/relay", adaptertest.DialOptions{Origin: origin})
		if err == nil {
			c.Close()
			t.Errorf("/relay upgrade with Origin %q accepted", origin)
		} else if c.Status() != http.StatusForbidden {
			t.Errorf("/relay upgrade with Origin %q: %d, want 403", origin, c.Status())
		}
	}
	resp := r.Do(adaptertest.Request{Path: "/health", Header: browserHeader()})
	if resp.Status != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != website {
		t.Fatalf("exact WEBSITE: %d ACAO %q", resp.Status, resp.Header.Get("Access-Control-Allow-Origin"))
	}
}
