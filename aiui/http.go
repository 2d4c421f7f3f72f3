package aiui

import (
	"errors"
	"net/http"
	"strings"

	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/hub"
)

// routes is the backend's HTTP surface. Every request and upgrade passes
// the Host check (DNS rebinding) first.
func (b *backend) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", b.health)
	mux.HandleFunc("/prompt", b.promptRoute)
	mux.HandleFunc("GET /ws", b.browser(b.upgradeWS))
	mux.HandleFunc("GET /tools", b.browser(b.upgradeTools))
	mux.HandleFunc("GET /debug", b.browser(b.debugPage))
	mux.HandleFunc("GET /debug/ui/{file}", b.browser(b.debugAsset))
	mux.HandleFunc("/debug/api/info", b.browser(b.debugInfo))
	mux.HandleFunc("/debug/api/reload", b.browser(b.debugReload))
	mux.HandleFunc("/debug/api/traces", b.browser(b.debugTraces))
	mux.HandleFunc("GET /debug/api/events", b.browser(b.debugEvents))
	mux.HandleFunc("GET /debug/blob/{key}", b.browser(b.debugBlob))
	mux.Handle("/control/", b.control())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hub.HostAllowed(r, b.port) {
			hub.WriteJSON(w, http.StatusForbidden, map[string]any{"ok": false, "error": "host not allowed"})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// browser wraps a browser-facing route. Its allow-list is loopback origins
// on any port plus the configured app origins (b.origins); a request
// without an Origin header is a non-browser client (curl, a CLI) and
// passes. Allowed origins get the CORS echo; preflights are answered here.
func (b *backend) browser(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if hub.HasOrigin(r) && !b.origins.SetCORS(w, r) {
			hub.WriteJSON(w, http.StatusForbidden, map[string]any{"ok": false, "error": "origin not allowed"})
			return
		}
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h(w, r)
	}
}

func (b *backend) health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	hub.WriteJSON(w, http.StatusOK, map[string]any{
		"ok": true, "pid": b.pid, "port": b.port, "generation": b.gen.Load(), "pageTools": b.dir.Summary(),
	})
}

// promptBody is POST /prompt: the text, and optionally the client context
// a /ws hello carries (tab, source), which frames the prompt the same way.
type promptBody struct {
	Text string           `json:"text"`
	Meta *frame.HelloMeta `json:"meta,omitempty"`
}

// promptRoute is POST /prompt, keyed or not. A request carrying
// Authorization, and with require_prompt_key every request, must carry
// this backend's per-start prompt key (Bearer), checked like a control
// route (hub.KeyGate: any Origin 403 first, a missing or wrong key 401)
// before its body is read; its prompt is from SenderKeyed. Otherwise it is
// a browser route (the spec's unauthenticated mode): its prompt is from
// the page its allowed Origin names, or from an unverified local process.
func (b *backend) promptRoute(w http.ResponseWriter, r *http.Request) {
	if b.cfg.RequirePromptKey || len(r.Header.Values("Authorization")) > 0 {
		b.promptGate().Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b.prompt(w, r, Sender{Kind: SenderKeyed})
		})).ServeHTTP(w, r)
		return
	}
	b.browser(func(w http.ResponseWriter, r *http.Request) { b.prompt(w, r, senderOf(r.Header)) })(w, r)
}

// promptGate checks the prompt key.
func (b *backend) promptGate() *hub.KeyGate {
	return &hub.KeyGate{Header: "Authorization", Key: b.promptKey, Port: func() int { return b.port },
		Hint: "(POST /prompt here wants `Authorization: Bearer <promptKey>`, the promptKey of the backend's control file; `hub aiui send` sends it)"}
}

func (b *backend) prompt(w http.ResponseWriter, r *http.Request, from Sender) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		hub.WriteJSON(w, http.StatusMethodNotAllowed, map[string]any{"ok": false, "error": "use POST"})
		return
	}
	var body promptBody
	if err := hub.ReadJSONBodyWithin(r, int64(b.cfg.MaxMessageBytes), b.promptBodies, &body); err != nil {
		status := http.StatusBadRequest
		switch {
		case errors.Is(err, hub.ErrBodyTooLarge):
			status = http.StatusRequestEntityTooLarge
		case errors.Is(err, hub.ErrBusy):
			status = http.StatusServiceUnavailable
			w.Header().Set("Retry-After", "1")
		}
		hub.WriteJSON(w, status, map[string]any{"ok": false, "error": err.Error()})
		return
	}
	if strings.TrimSpace(body.Text) == "" {
		hub.WriteJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error": `body must be {"text": "<non-empty prompt>"}`})
		return
	}
	p := channel.Prompt{Text: channel.Preamble(body.Meta, "") + body.Text, Meta: channel.MetaAttributes(body.Meta)}
	p.Meta["source"] = "http"
	from.stamp(p.Meta)
	if body.Meta != nil && body.Meta.Source != nil {
		p.Root = body.Meta.Source.Root
	}
	seq, err := b.outbox.Deliver(p)
	b.touch()
	if err != nil {
		hub.WriteJSON(w, http.StatusInsufficientStorage, map[string]any{"ok": false, "error": err.Error()})
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "seq": seq})
}

func (b *backend) debugInfo(w http.ResponseWriter, r *http.Request) {
	hub.WriteJSON(w, http.StatusOK, b.info())
}

func (b *backend) info() map[string]any {
	return map[string]any{
		"ok": true, "pid": b.pid, "port": b.port, "generation": b.gen.Load(), "kind": b.s.Kind,
		"startedAt": b.started, "formats": b.formats.Load().Names(), "pageTools": b.dir.Summary(),
		"faces": b.outbox.FaceCount(), "followers": b.outbox.FollowerCount(), "pendingPrompts": b.outbox.Pending(), "cwd": b.cwd,
		"callTimeoutMs": b.callTimeout().Milliseconds(), "promptKeyRequired": b.cfg.RequirePromptKey,
	}
}

func (b *backend) debugReload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		hub.WriteJSON(w, http.StatusMethodNotAllowed, map[string]any{"ok": false, "error": "use POST"})
		return
	}
	hub.WriteJSON(w, http.StatusOK, b.reload())
}
