package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner"
)

// KeyHeader carries the control key, read from the 0600 state file.
const KeyHeader = "X-Hub-Key"

// Control is the daemon's authenticated loopback HTTP endpoint, used by
// `hub status`, `hub stop` and the agent faces that attach (`hub mcp`).
type Control struct {
	Key    string
	Port   int        // the bound port, for the Host check
	Status func() any // GET /status body
	Stop   func()     // POST /stop: begin graceful shutdown
	// Attach records an agent face attached through GET /attach until the
	// returned detach runs (nil: the route is not served).
	Attach func() (detach func())
}

// ServeHTTP answers control requests behind the shared key gate: a request
// carrying an Origin header is refused before the key is even read, so a
// page can never drive the hub even if a key leaked.
func (c *Control) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	gate := hub.KeyGate{Header: KeyHeader, Key: func() string { return c.Key }, Port: func() int { return c.Port }}
	gate.Wrap(http.HandlerFunc(c.route)).ServeHTTP(w, r)
}

func (c *Control) route(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/status":
		hub.WriteJSON(w, http.StatusOK, c.Status())
	case r.Method == http.MethodGet && r.URL.Path == "/attach":
		c.serveAttach(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/stop":
		hub.WriteJSON(w, http.StatusAccepted, map[string]any{"ok": true, "message": "stopping"})
		go c.Stop()
	default:
		hub.WriteJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error": "not_found"})
	}
}

// ControlTransport is the transport of requests carrying st's key to its
// control endpoint. The key goes only to a socket of this user's: every
// connection is checked before a byte is written (portowner.Dialer), so
// an endpoint port another user holds is refused, naming the holder and
// the state file. The caller closes its idle connections when done.
func ControlTransport(st *State) *http.Transport {
	source := "the state file"
	if st.file != "" {
		source += " " + st.file
	}
	return (&portowner.Dialer{Source: source}).Transport()
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
	tr := ControlTransport(st)
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if re, ok := errors.AsType[*portowner.RefusedError](err); ok {
		return 0, nil, fmt.Errorf("control endpoint: %w", re) // it names the address
	}
	if err != nil {
		return 0, nil, fmt.Errorf("control endpoint %s: %w", st.Control, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, err
}
