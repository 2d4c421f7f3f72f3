package aiui

import (
	"net/http"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// TestCORSEchoesCanonicalOrigin is issue 15 row 4: a browser route echoes
// the canonical allowed origin, and a non-canonical spelling of a loopback
// or configured origin (which no browser sends) is refused rather than
// echoed back raw.
func TestCORSEchoesCanonicalOrigin(t *testing.T) {
	h, _ := start(t, func(c *Config, _ *Server) { c.Origins = []string{"https://App.Example/"} })
	for origin, want := range map[string]string{
		"http://localhost:5173":   "http://localhost:5173",
		"https://app.example":     "https://app.example",
		"HTTP://LOCALHOST:5173/":  "",
		"http://localhost:5173/":  "",
		"https://APP.example":     "",
		"https://app.example:443": "",
	} {
		r := h.Do(adaptertest.Request{Method: "OPTIONS", Path: "/prompt", Header: http.Header{"Origin": {origin}}})
		got := r.Header.Get("Access-Control-Allow-Origin")
		if want == "" {
			if r.Status != http.StatusForbidden || got != "" {
				t.Errorf("Origin %q: %d ACAO %q, want 403 and no echo", origin, r.Status, got)
			}
			continue
		}
		if r.Status != http.StatusNoContent || got != want {
			t.Errorf("Origin %q: %d ACAO %q, want 204 and %q", origin, r.Status, got, want)
		}
	}
	c, err := h.Dial("/ws", adaptertest.DialOptions{Origin: "HTTP://LOCALHOST:5173/"})
	if err == nil {
		c.Close()
		t.Fatal("/ws upgrade with a non-canonical loopback origin accepted")
	}
}
