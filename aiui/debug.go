package aiui

import (
	"embed"
	"html/template"
	"net/http"
	"strconv"

	"github.com/hubdev/hub/hub"
)

// The /debug viewer: plain HTML, CSS and JS embedded in the binary (no
// build step), so a CSP without 'unsafe-inline' holds it.
//
//go:embed debugui
var debugUI embed.FS

var debugTmpl = template.Must(template.ParseFS(debugUI, "debugui/index.html"))

// debugAssets are the only files /debug/ui/ serves, with their types.
var debugAssets = map[string]string{
	"app.js":  "text/javascript; charset=utf-8",
	"app.css": "text/css; charset=utf-8",
}

// debugHeaders keep the viewer from being framed, sniffed or cached, and
// let it run only its own script: a hostile page's transcript is data the
// viewer shows, never markup.
func debugHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "+
		"img-src 'self'; media-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

func (b *backend) debugPage(w http.ResponseWriter, r *http.Request) {
	debugHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	debugTmpl.Execute(w, b.info())
}

func (b *backend) debugAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	typ, ok := debugAssets[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	body, err := debugUI.ReadFile("debugui/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	debugHeaders(w)
	w.Header().Set("Content-Type", typ)
	w.Write(body)
}

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
