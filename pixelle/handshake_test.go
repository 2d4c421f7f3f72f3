package pixelle

import (
	"net/http"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// A broken upgrade to /relay is refused by the relay itself, as JSON with
// the contract's headers (CORS included for the website), never with the
// WebSocket library's bare text/plain 400.
func TestBrokenUpgradeAnsweredAsJSON(t *testing.T) {
	r := startRelay(t, nil)
	good := func() http.Header {
		return http.Header{
			"Origin":                {website},
			"Connection":            {"Upgrade"},
			"Upgrade":               {"websocket"},
			"Sec-Websocket-Version": {"13"},
			"Sec-Websocket-Key":     {"dGhlIHNhbXBsZSBub25jZQ=="},
		}
	}
	for _, tc := range []struct {
		name   string
		edit   func(http.Header)
		status int
	}{
		{"no key", func(h http.Header) { h.Del("Sec-Websocket-Key") }, 400},
		{"short key", func(h http.Header) { h.Set("Sec-Websocket-Key", "c2hvcnQ=") }, 400},
		{"no Connection upgrade", func(h http.Header) { h.Set("Connection", "keep-alive") }, 400},
		{"old version", func(h http.Header) { h.Set("Sec-Websocket-Version", "8") }, 426},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := good()
			tc.edit(h)
			resp := r.Do(adaptertest.Request{Path: "/relay", Header: h})
			if resp.Status != tc.status {
				t.Fatalf("status %d %q, want %d", resp.Status, resp.Body, tc.status)
			}
			checkJSONHeaders(t, resp)
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != website {
				t.Errorf("Access-Control-Allow-Origin %q", got)
			}
			if tc.status == 426 && resp.Header.Get("Sec-Websocket-Version") != "13" {
				t.Errorf("426 without Sec-WebSocket-Version: 13")
			}
		})
	}
	// The well-formed handshake still upgrades.
	c := r.MustDial("/relay", adaptertest.DialOptions{Origin: website})
	c.Close()
}
