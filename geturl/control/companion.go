package control

import (
	"errors"
	"net/http"

	"github.com/hubdev/hub/hub"
)

// Companion is the browser companion as the control plane serves it: the
// device API under /companion/ (its own gate: an extension's Origin, the
// loopback Host, a device credential) and the operator's side, behind the
// control key (/api/companion/…) or the page's session
// (/ui/api/companion/…). The geturl/companion package implements it.
type Companion interface {
	// Handler serves /companion/.
	Handler() http.Handler
	// Overview is what the operator sees (JSON-encodable).
	Overview() any
	Approve(request string) error
	Refuse(request string) error
	Revoke(device string) error
}

// companionRoutes adds the operator's companion API to mux under prefix
// ("/api/companion" or "/ui/api/companion"), each handler wrapped by gate.
func (c *Plane) companionRoutes(mux *http.ServeMux, prefix string, gate func(http.HandlerFunc) http.HandlerFunc) {
	mux.HandleFunc("GET "+prefix, gate(c.companionList))
	mux.HandleFunc("POST "+prefix+"/{op}/{id}", gate(c.companionOp))
}

func (c *Plane) companionList(w http.ResponseWriter, r *http.Request) {
	if c.Companion == nil {
		companionOff(w)
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "companion": c.Companion.Overview()})
}

func (c *Plane) companionOp(w http.ResponseWriter, r *http.Request) {
	if c.Companion == nil {
		companionOff(w)
		return
	}
	var op func(string) error
	switch r.PathValue("op") {
	case "approve":
		op = c.Companion.Approve
	case "refuse":
		op = c.Companion.Refuse
	case "revoke":
		op = c.Companion.Revoke
	default:
		hub.WriteJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error": "not_found", "message": "the companion supports approve, refuse and revoke"})
		return
	}
	id := r.PathValue("id")
	if err := op(id); err != nil {
		var ce interface {
			HTTPStatus() int
			ErrorCode() string
		}
		if errors.As(err, &ce) {
			hub.WriteJSON(w, ce.HTTPStatus(), map[string]any{"ok": false, "error": ce.ErrorCode(), "message": err.Error()})
			return
		}
		hub.WriteJSON(w, http.StatusInternalServerError, map[string]any{"ok": false, "error": "internal", "message": err.Error()})
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "id": id, "companion": c.Companion.Overview()})
}

func companionOff(w http.ResponseWriter) {
	hub.WriteJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error": "companion_off", "message": "this geturl serves no browser companion"})
}
