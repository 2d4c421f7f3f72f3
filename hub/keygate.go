package hub

import (
	"net/http"
	"strings"
)

// KeyGate guards a keyed loopback control endpoint (the hub's, and each
// bridge's). Checks run in this order: a request carrying any Origin header
// is refused (403) before the key is looked at — shells and agents send
// none, pages always do, so even a leaked key is useless to a web page;
// the Host must name the bound loopback port (403, DNS rebinding); the key
// must match in constant time (401).
type KeyGate struct {
	// Header carries the key; for "Authorization" the value is "Bearer <key>".
	Header string
	// Key and Port return the current key and bound port; they are read per
	// request because a server mints a fresh key on every start.
	Key  func() string
	Port func() int
	// Hint ends the 401 message, e.g. "(a stale session file?)".
	Hint string
}

// Wrap returns next behind the gate.
func (g *KeyGate) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code, status, msg := g.check(r); code != "" {
			WriteJSON(w, status, map[string]any{"ok": false, "error": code, "message": msg})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// check returns the refusal for r, or "" when r may pass.
func (g *KeyGate) check(r *http.Request) (code string, status int, msg string) {
	if HasOrigin(r) {
		return "forbidden_origin", http.StatusForbidden, "control requests from web pages are refused"
	}
	if !HostAllowed(r, g.Port()) {
		return "forbidden_host", http.StatusForbidden, "Host must be 127.0.0.1 or localhost with this port"
	}
	got := r.Header.Get(g.Header)
	if strings.EqualFold(g.Header, "Authorization") {
		got, _ = strings.CutPrefix(got, "Bearer ")
	}
	if !SecretEqual(got, g.Key()) {
		return "unauthorized", http.StatusUnauthorized, strings.TrimSpace("missing or wrong " + g.Header + " " + g.Hint)
	}
	return "", 0, ""
}
