package stitchslop

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"time"

	"github.com/hubdev/hub/hub"
)

// KeyHeader carries the session key on every control-plane request (§4.2).
const KeyHeader = "x-stitchslop-key"

// ServeHTTP routes one request on the bridge's port: WebSocket upgrades go
// to the page side, the four control routes (plus /pair and /events) to
// the control plane, and everything else is answered 426.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isUpgrade(r) {
		s.serveUpgrade(w, r)
		return
	}
	var h func(http.ResponseWriter, *http.Request)
	switch r.Method + " " + r.URL.Path {
	case "GET /status":
		h = s.handleStatus
	case "GET /tools":
		h = s.handleTools
	case "POST /wait":
		h = s.handleWait
	case "POST /call":
		h = s.handleCall
	case "POST /pair":
		h = s.handlePair
	case "GET /events":
		h = s.handleEvents
	}
	if h == nil {
		// A DNS-rebinding page can read this answer; refuse a foreign Host
		// here too rather than describe the bridge to it.
		s.mu.Lock()
		port := s.port
		s.mu.Unlock()
		if !hub.HostAllowed(r, port) {
			hub.WriteJSON(w, http.StatusForbidden, map[string]any{"ok": false, "error": "forbidden_host", "message": "Host must be 127.0.0.1 or localhost with this port"})
			return
		}
		w.Header().Set("Upgrade", "websocket")
		hub.WriteJSON(w, http.StatusUpgradeRequired, map[string]any{"ok": false, "error": "upgrade_required",
			"message": "this port serves the Stitch Slop page WebSocket and the keyed control plane (GET /status, GET /tools, POST /wait, POST /call, GET /events)"})
		return
	}
	// §4.3: a request carrying Origin comes from a page; the gate refuses
	// it before the key is even looked at.
	s.control.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer s.agentRequest()()
		h(w, r)
	})).ServeHTTP(w, r)
}

// agentRequest records a control request as agent activity for as long as
// it runs (§2.8): a `wait 600` or a call waiting its turn is an agent that
// is plainly there, and an idle exit must not cut it off. The returned
// end restarts the idle clock from the request's end.
func (s *Server) agentRequest() (end func()) {
	s.agentActivity()
	s.mu.Lock()
	env := s.env
	s.mu.Unlock()
	if env == nil {
		return func() {}
	}
	return env.Activity.AgentAttached()
}

// StatusReport is GET /status (and `hub stitchslop status`).
type StatusReport struct {
	OK           bool             `json:"ok"`
	Connected    bool             `json:"connected"`
	Port         int              `json:"port"`
	Origin       string           `json:"origin"`
	Protocol     int              `json:"protocol"`
	PID          int              `json:"pid"`
	Paired       bool             `json:"paired"`
	TokenArmed   bool             `json:"tokenArmed"`
	Tools        []string         `json:"tools"`
	DroppedTools []DroppedTool    `json:"droppedTools,omitempty"`
	Attempts     int              `json:"attempts"`
	Refusals     []Refusal        `json:"refusals"`
	OtherBridges []map[string]any `json:"otherBridges,omitempty"`
	// Face says, for a face that is not its own bridge (or took one
	// over), which bridge it serves.
	Face    *FaceReport `json:"face,omitempty"`
	Message string      `json:"message"`
}

// Report builds the status snapshot.
func (s *Server) Report() StatusReport {
	s.mu.Lock()
	r := StatusReport{OK: true, Connected: s.page != nil, Port: s.port, Origin: s.origin, Protocol: ProtocolVersion,
		PID: os.Getpid(), TokenArmed: s.armed != "", Tools: []string{}, DroppedTools: append([]DroppedTool(nil), s.dropped...)}
	for _, t := range s.tools {
		r.Tools = append(r.Tools, t.Name)
	}
	store, dir, note := s.pairings, s.configDir, s.noteLocked()
	s.mu.Unlock()
	if store != nil {
		r.Paired = store.Paired(s.origin)
	}
	r.Attempts, r.Refusals = s.refusals.snapshot()
	if dir != "" {
		r.OtherBridges = otherBridges(dir, r.Port)
	}
	switch {
	case r.Connected:
		r.Message = "A Stitch Slop tab is connected."
	case note != "":
		r.Message = "No tab connected; this bridge " + note + "."
	case r.Attempts == 0:
		r.Message = "No tab connected, and no browser has tried to connect yet (if that persists, check the browser console for a Content-Security-Policy block)."
	case len(r.Refusals) > 0:
		r.Message = "No tab connected; the browser tried and was refused (see refusals)."
	default:
		r.Message = "No tab connected yet; the page polls and attaches on its own."
	}
	return r
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	hub.WriteJSON(w, http.StatusOK, s.Report())
}

func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	tools, ok := s.Tools()
	if !ok {
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "no_page", "message": noPageText(s.Port(), toolWait)})
		return
	}
	if tools == nil {
		tools = []PageTool{}
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "tools": tools})
}

func (s *Server) handleWait(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Seconds *float64 `json:"seconds"`
	}
	if err := hub.ReadJSONBody(r, maxControlBody, &body); err != nil {
		badRequest(w, err)
		return
	}
	secs := float64(DefaultWaitSeconds)
	if body.Seconds != nil && *body.Seconds >= 0 {
		secs = min(*body.Seconds, MaxControlWaitSeconds)
	}
	if s.waitAttached(r.Context(), time.Duration(secs*float64(time.Second))) {
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "connected": true, "message": "A Stitch Slop tab is connected."})
		return
	}
	if r.Context().Err() != nil {
		// The bridge is stopping (or the caller left): "wait again" would
		// send the caller to a bridge that is gone.
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "stopping", "connected": false,
			"message": "The bridge stopped while waiting for a Stitch Slop tab; `hub stitchslop status` says whether one runs now."})
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "timeout", "connected": false,
		"message": "No Stitch Slop tab attached in time; the page polls on its own, so waiting again is fine."})
}

// waitAttached blocks until a page is attached, d passes or ctx ends.
func (s *Server) waitAttached(ctx context.Context, d time.Duration) bool {
	ch, ok := s.attached()
	if ok || waitClosed(ctx, ch, d) {
		return true
	}
	_, ok = s.attached()
	return ok
}

// waitClosed reports whether ch closed within d (and before ctx ended).
func waitClosed(ctx context.Context, ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

func (s *Server) handleCall(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Command string          `json:"command"`
		Args    json.RawMessage `json:"args"`
	}
	if err := hub.ReadJSONBody(r, maxControlBody, &body); err != nil {
		badRequest(w, err)
		return
	}
	if body.Command == "" {
		badRequest(w, errors.New("command is required"))
		return
	}
	out, err := s.Call(r.Context(), body.Command, body.Args)
	switch {
	case errors.Is(err, ErrNoPage):
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "no_page", "message": noPageText(s.Port(), toolWait)})
	case err != nil:
		badRequest(w, err)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		w.Write(append(out, '\n'))
	}
}

func (s *Server) handlePair(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Token string `json:"token"`
	}
	if err := hub.ReadJSONBody(r, 4<<10, &body); err != nil {
		badRequest(w, err)
		return
	}
	if err := s.ArmToken(body.Token); err != nil {
		code := "bad_token"
		if errors.Is(err, errTokenSpent) {
			code = "spent_token"
		}
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": code, "message": err.Error()})
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "message": "token armed for " + s.origin + "; the page can now pair once"})
}

func badRequest(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	if errors.Is(err, hub.ErrBodyTooLarge) {
		status = http.StatusRequestEntityTooLarge
	}
	hub.WriteJSON(w, status, map[string]any{"ok": false, "error": "bad_request", "message": err.Error()})
}

// noPageText is the helpful answer to a call with no page (§3.5); wait is
// the wait tool's name where it is read.
func noPageText(port int, wait string) string {
	return "No Stitch Slop tab is connected to this bridge (port " + itoa(port) + "). " +
		"The page polls for the bridge and attaches on its own: call " + wait + " (or `hub stitchslop wait`) and retry. " +
		"If that times out, ask the user whether the Allow agent connections switch is on in their Stitch Slop tab."
}
