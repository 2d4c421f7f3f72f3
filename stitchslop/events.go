package stitchslop

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/hubdev/hub/hub"
)

// ToolsEvent is one line of GET /events: the page's state after an attach,
// a tool-list revision or a detach. Each event carries the whole state, so
// a face that misses one (events are coalesced) is never out of step.
type ToolsEvent struct {
	// Type is "tools", or "ping" on an idle stream.
	Type string `json:"type"`
	// Rev counts changes since the bridge started.
	Rev       uint64     `json:"rev"`
	Connected bool       `json:"connected"`
	Port      int        `json:"port"`
	Tools     []PageTool `json:"tools"`
}

// eventsKeepalive is how often an idle event stream writes a ping, so a
// face that died without closing is noticed by a failed write.
var eventsKeepalive = 15 * time.Second

// toolsEvent is the current state, read under one lock.
func (r *run) toolsEvent() ToolsEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return ToolsEvent{Type: "tools", Rev: r.rev, Connected: r.page != nil, Port: r.port, Tools: append([]PageTool{}, r.tools...)}
}

// handleEvents is GET /events: an attached face's stream of ToolsEvent
// lines (NDJSON), the current state first, then one per change. A face
// holding the stream counts as an attached agent: in `hub status` AGENTS
// and for the idle rules, which do not fire while it stays.
func (rn *run) handleEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		hub.WriteJSON(w, http.StatusInternalServerError, map[string]any{"ok": false, "error": "internal", "message": "streaming unsupported"})
		return
	}
	face := clip(r.URL.Query().Get("face"), 64)
	rn.mu.Lock()
	rn.faces++
	rn.mu.Unlock()
	defer rn.agents.follow(requestAgentOr(r, face))()
	detach := func() {}
	if rn.env != nil {
		detach = rn.env.Activity.AgentAttached()
	}
	rn.log.Info("agent face attached", "face", face)
	defer func() {
		rn.mu.Lock()
		rn.faces--
		rn.mu.Unlock()
		detach()
		rn.log.Info("agent face detached", "face", face)
	}()

	// The page's read loop runs the listener: it only marks a change, and
	// this handler writes it, so a slow face never holds up the page.
	changed := make(chan struct{}, 1)
	unsub := rn.s.Subscribe(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer unsub()

	defer hub.EndWritesWhenDone(w, r)() // a stopped face must not hold up the bridge's stop
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	write := func(ev ToolsEvent) bool {
		b, err := json.Marshal(ev)
		if err != nil {
			return false
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	if !write(rn.toolsEvent()) {
		return
	}
	tick := time.NewTicker(eventsKeepalive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-changed:
			if !write(rn.toolsEvent()) {
				return
			}
		case <-tick.C:
			if !write(ToolsEvent{Type: "ping"}) {
				return
			}
		}
	}
}
