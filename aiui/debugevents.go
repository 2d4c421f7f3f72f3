package aiui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/hubdev/hub/hub"
)

// Viewer feed settings.
var (
	// eventsCoalesce gathers a burst of changes (a batch, its compose, its
	// condition pass) into one event.
	eventsCoalesce = 100 * time.Millisecond
	// eventsKeepalive is how often an idle feed refreshes the info line;
	// the write also notices a viewer that went away.
	eventsKeepalive = 10 * time.Second
	// eventsWriteTimeout bounds one write to a viewer that stopped reading.
	eventsWriteTimeout = 10 * time.Second
)

// maxViewers bounds the live feeds held open at once.
const maxViewers = 32

// debugEvents is GET /debug/api/events, the viewer's live feed
// (server-sent events). A "traces" event carries the store's version, the
// ids it holds, the traces changed since the previous event with only
// their new stages, and the info line; the first event carries everything.
// An "info" event refreshes the info line while nothing changes.
func (b *backend) debugEvents(w http.ResponseWriter, r *http.Request) {
	if !b.traces.addViewer() {
		hub.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"ok": false, "error": "too many /debug viewers"})
		return
	}
	defer b.traces.dropViewer()
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)

	ping := time.NewTicker(eventsKeepalive)
	defer ping.Stop()
	sent := map[string]int{}
	var version uint64
	first := true
	for {
		wake := b.traces.changed()
		v, ids, changed := b.traces.changes(version, sent)
		if first || v != version {
			msg := map[string]any{"version": v, "ids": ids, "traces": changed, "info": b.info()}
			if !writeEvent(w, rc, "traces", msg) {
				return
			}
			version, first = v, false
		}
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			if !writeEvent(w, rc, "info", b.info()) {
				return
			}
			continue
		case <-wake:
		}
		t := time.NewTimer(eventsCoalesce)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// writeEvent writes one server-sent event (JSON holds no raw newline, so
// it fits one data line) and flushes it.
func writeEvent(w http.ResponseWriter, rc *http.ResponseController, name string, v any) bool {
	data, err := json.Marshal(v)
	if err != nil {
		return false
	}
	rc.SetWriteDeadline(time.Now().Add(eventsWriteTimeout))
	if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		return false
	}
	return rc.Flush() == nil
}

func (s *traceStore) addViewer() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.viewers >= maxViewers {
		return false
	}
	s.viewers++
	return true
}

func (s *traceStore) dropViewer() {
	s.mu.Lock()
	s.viewers--
	s.mu.Unlock()
}
