package supervisor

import (
	"net/http"
	"time"
)

// attachKeepalive is how often GET /attach writes a line, so an agent that
// died without closing is noticed by a failed write.
var attachKeepalive = 15 * time.Second

// serveAttach is GET /attach: a stream an agent face (hub mcp) holds open
// for as long as it is there. While any face holds one, the hub's idle
// rules do not fire, as none does while an MCP client owns a standalone
// bridge; the stream carries one line at once and a ping now and then.
func (c *Control) serveAttach(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok || c.Attach == nil {
		http.NotFound(w, r)
		return
	}
	detach := c.Attach()
	defer detach()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	line := []byte(`{"type":"attached"}` + "\n")
	tick := time.NewTicker(attachKeepalive)
	defer tick.Stop()
	for {
		if _, err := w.Write(line); err != nil {
			return
		}
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			line = []byte(`{"type":"ping"}` + "\n")
		}
	}
}
