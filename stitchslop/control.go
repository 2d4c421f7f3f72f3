package stitchslop

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/hubdev/hub/hub"
)

// KeyHeader carries the session key on every control-plane request (§4.2).
const KeyHeader = "x-stitchslop-key"

// ServeHTTP routes one request on the bridge's port: WebSocket upgrades go
// to the page side, the four control routes (plus /pair and /events) to
// the control plane, and everything else is answered 426.
func (rn *run) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isUpgrade(r) {
		rn.serveUpgrade(w, r)
		return
	}
	var h func(http.ResponseWriter, *http.Request)
	switch r.Method + " " + r.URL.Path {
	case "GET /status":
		h = rn.handleStatus
	case "GET /tools":
		h = rn.handleTools
	case "POST /wait":
		h = rn.handleWait
	case "POST /call":
		h = rn.handleCall
	case "POST /pair":
		h = rn.handlePair
	case "GET /events":
		h = rn.handleEvents
	}
	if h == nil {
		// A DNS-rebinding page can read this answer; refuse a foreign Host
		// here too rather than describe the bridge to it.
		if !hub.HostAllowed(r, rn.port) {
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
	rn.control.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer rn.agentRequest()()
		h(w, r)
	})).ServeHTTP(w, r)
}

// StatusReport is GET /status (and `hub stitchslop status`).
type StatusReport struct {
	OK         bool   `json:"ok"`
	Connected  bool   `json:"connected"`
	Port       int    `json:"port"`
	Origin     string `json:"origin"`
	Protocol   int    `json:"protocol"`
	PID        int    `json:"pid"`
	Paired     bool   `json:"paired"`
	TokenArmed bool   `json:"tokenArmed"`
	// PairedSites are the sites a page may attach from with a stored
	// pairing: this bridge's own, and the production and loopback sites
	// this machine is paired with (each must present its own secret).
	PairedSites []string `json:"pairedSites"`
	// ArmedSites are the sites a one-time token is armed for.
	ArmedSites []string `json:"armedSites"`
	// PageOrigin is the attached tab's site, and AttachedWith how it
	// authenticated: "token" (now spent) or "pairing".
	PageOrigin   string           `json:"pageOrigin,omitempty"`
	AttachedWith string           `json:"attachedWith,omitempty"`
	Tools        []string         `json:"tools"`
	DroppedTools []DroppedTool    `json:"droppedTools,omitempty"`
	Attempts     int              `json:"attempts"`
	Refusals     []Refusal        `json:"refusals"`
	OtherBridges []map[string]any `json:"otherBridges,omitempty"`
	// Agents drive the tab side by side: each call goes at once.
	Agents []AgentReport `json:"agents"`
	// Face says, for a face that is not its own bridge (or took one
	// over), which bridge it serves.
	Face    *FaceReport `json:"face,omitempty"`
	Message string      `json:"message"`
}

func (rn *run) handleStatus(w http.ResponseWriter, r *http.Request) {
	hub.WriteJSON(w, http.StatusOK, rn.report())
}

func (rn *run) handleTools(w http.ResponseWriter, r *http.Request) {
	tools, ok := rn.Tools()
	if !ok {
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "no_page", "message": noPageText(rn.port, toolWait)})
		return
	}
	if tools == nil {
		tools = []PageTool{}
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "tools": tools})
}

func (rn *run) handleWait(w http.ResponseWriter, r *http.Request) {
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
	if rn.s.waitAttached(r.Context(), time.Duration(secs*float64(time.Second))) {
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

func (rn *run) handleCall(w http.ResponseWriter, r *http.Request) {
	b, err := hub.ReadBody(r, maxControlBody)
	if err != nil {
		badRequest(w, err)
		return
	}
	body, err := decodeCallBody(b)
	if err != nil {
		badRequest(w, err)
		return
	}
	if body.Command == "" {
		badRequest(w, errors.New("command is required"))
		return
	}
	out, err := rn.call(r.Context(), requestAgent(r), body.Command, body.Args)
	switch {
	case errors.Is(err, ErrNoPage):
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "no_page", "message": noPageText(rn.port, toolWait)})
	case err != nil:
		badRequest(w, err)
	default:
		// The page's envelope, verbatim (§4.2); its reader left room for
		// the newline.
		h := w.Header()
		h["Content-Type"] = contentTypeJSON
		h["Cache-Control"] = cacheNoStore
		h["Date"] = hub.DateHeader()
		w.WriteHeader(http.StatusOK)
		w.Write(append(out, '\n'))
	}
}

// The values of the headers of every /call answer, shared: net/http only
// reads them (http.Header.Set would make each anew).
var (
	contentTypeJSON = []string{"application/json"}
	cacheNoStore    = []string{"no-store"}
)

func (rn *run) handlePair(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Token  string `json:"token"`
		Origin string `json:"origin"`
	}
	if err := hub.ReadJSONBody(r, 4<<10, &body); err != nil {
		badRequest(w, err)
		return
	}
	site, err := rn.s.ArmTokenFor(body.Origin, body.Token)
	if err != nil {
		code := "bad_token"
		if errors.Is(err, errTokenSpent) {
			code = "spent_token"
		}
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": code, "message": err.Error()})
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "message": "token armed for " + site + "; a page of it can now pair once"})
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
