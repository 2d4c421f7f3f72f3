package aiui

import (
	"net/http"
	"strconv"

	"github.com/hubdev/hub/hub"
)

// debugTraces is GET /debug/api/traces[?since=<version>]: the traces that
// changed after that version (every trace without it), the version to ask
// from next, and the ids still held, so a poller fetches only what changed.
func (b *backend) debugTraces(w http.ResponseWriter, r *http.Request) {
	var since uint64
	if q := r.URL.Query().Get("since"); q != "" {
		var err error
		if since, err = strconv.ParseUint(q, 10, 64); err != nil {
			hub.WriteJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error": "since must be a version number"})
			return
		}
	}
	v, ids, traces := b.traces.changes(since, nil)
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "version": v, "ids": ids, "traces": traces})
}
