package supervisor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/hubdev/hub/hub"
)

// KeyHeader carries the control key, read from the 0600 state file.
const KeyHeader = "X-Hub-Key"

// Control is the daemon's authenticated loopback HTTP endpoint, used by
// `hub status` and `hub stop`.
type Control struct {
	Key    string
	Port   int        // the bound port, for the Host check
	Status func() any // GET /status body
	Stop   func()     // POST /stop: begin graceful shutdown
}

// ServeHTTP answers control requests. A request carrying an Origin header is
// refused before the key is even read: shells send none, web pages always
// do, so a page can never drive the hub even if a key leaked.
func (c *Control) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if hub.HasOrigin(r) {
		hub.WriteJSON(w, http.StatusForbidden, map[string]any{"ok": false, "error": "origin", "message": "requests from web pages are refused"})
		return
	}
	if !hub.HostAllowed(r, c.Port) {
		hub.WriteJSON(w, http.StatusForbidden, map[string]any{"ok": false, "error": "host", "message": "bad Host header"})
		return
	}
	if !hub.SecretEqual(r.Header.Get(KeyHeader), c.Key) {
		hub.WriteJSON(w, http.StatusUnauthorized, map[string]any{"ok": false, "error": "unauthorized", "message": "missing or wrong " + KeyHeader})
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/status":
		hub.WriteJSON(w, http.StatusOK, c.Status())
	case r.Method == http.MethodPost && r.URL.Path == "/stop":
		hub.WriteJSON(w, http.StatusAccepted, map[string]any{"ok": true, "message": "stopping"})
		go c.Stop()
	default:
		hub.WriteJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error": "not_found"})
	}
}

// ControlCall sends one authenticated request to a running hub and returns
// the status code and body.
func ControlCall(ctx context.Context, st *State, method, path string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, st.Control+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set(KeyHeader, st.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("control endpoint %s: %w", st.Control, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, err
}
