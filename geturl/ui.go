package geturl

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/hub"
)

// The control page: plain HTML, CSS and JS embedded in the binary (no build
// step, works from `go install` alone).
//
//go:embed ui
var uiFiles embed.FS

var pageTmpl = template.Must(template.ParseFS(uiFiles, "ui/index.html"))

// Login and cookie lifetimes.
const (
	loginTTL     = 2 * time.Minute // a `hub geturl open` URL works once, briefly
	cookieTTL    = 12 * time.Hour
	cookieName   = "geturl_ui"
	maxUISession = 32
)

// uiAuth holds the control page's one-time login tokens and its cookie
// sessions, both only as hashes and only in memory.
type uiAuth struct {
	now func() time.Time

	mu      sync.Mutex
	logins  map[string]time.Time // hash of a login token → expiry
	cookies map[string]time.Time // hash of a cookie value → expiry
}

func newUIAuth(now func() time.Time) *uiAuth {
	return &uiAuth{now: now, logins: map[string]time.Time{}, cookies: map[string]time.Time{}}
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// newLogin mints a one-time login token.
func (a *uiAuth) newLogin() string {
	tok := hub.RandomToken(24)
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for h, exp := range a.logins {
		if now.After(exp) {
			delete(a.logins, h)
		}
	}
	a.logins[hashOf(tok)] = now.Add(loginTTL)
	return tok
}

// redeem spends a login token and returns a new cookie value.
func (a *uiAuth) redeem(tok string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	h := hashOf(tok)
	exp, ok := a.logins[h]
	delete(a.logins, h)
	if !ok || a.now().After(exp) || tok == "" {
		return "", false
	}
	now := a.now()
	for ch, exp := range a.cookies {
		if now.After(exp) {
			delete(a.cookies, ch)
		}
	}
	for len(a.cookies) >= maxUISession { // forget the oldest
		var oldest string
		for ch, exp := range a.cookies {
			if oldest == "" || exp.Before(a.cookies[oldest]) {
				oldest = ch
			}
		}
		delete(a.cookies, oldest)
	}
	cookie := hub.RandomToken(32)
	a.cookies[hashOf(cookie)] = now.Add(cookieTTL)
	return cookie, true
}

// valid reports whether r carries a live cookie. The map is keyed by hash,
// so no comparison over secret bytes depends on how much of a guess matched.
func (a *uiAuth) valid(r *http.Request) bool {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.cookies[hashOf(c.Value)]
	return ok && a.now().Before(exp)
}

// uiGate is the page's authentication: the Host must be this loopback
// port (DNS rebinding); reads and writes need the cookie; writes also need
// an Origin equal to the page's own origin, and fail closed without one.
func (c *control) uiGate(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !hub.HostAllowed(r, c.ctrlPort) {
			hub.WriteJSON(w, http.StatusForbidden, map[string]any{"ok": false, "error": "forbidden_host", "message": "Host must be 127.0.0.1 or localhost with this port"})
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if o := r.Header.Values("Origin"); len(o) != 1 || o[0] != "http://"+r.Host {
				hub.WriteJSON(w, http.StatusForbidden, map[string]any{"ok": false, "error": "forbidden_origin", "message": "changes are accepted only from the control page itself"})
				return
			}
		}
		if !c.ui.valid(r) {
			hub.WriteJSON(w, http.StatusUnauthorized, map[string]any{"ok": false, "error": "login_required", "message": "run `hub geturl open` for a login URL"})
			return
		}
		h(w, r)
	}
}

// pageHeaders keep the page from being framed, sniffed or cached, and let
// it run only its own script.
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// uiRoutes adds the page, its assets, the login and the page's API.
func (c *control) uiRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if !hub.HostAllowed(r, c.ctrlPort) {
			http.Error(w, "forbidden Host", http.StatusForbidden)
			return
		}
		pageHeaders(w)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if !c.ui.valid(r) {
			w.WriteHeader(http.StatusUnauthorized)
		}
		pageTmpl.Execute(w, map[string]any{"LoggedIn": c.ui.valid(r)})
	})
	static, _ := fs.Sub(uiFiles, "ui")
	files := http.FileServerFS(static)
	mux.HandleFunc("GET /ui/{file}", func(w http.ResponseWriter, r *http.Request) {
		if !hub.HostAllowed(r, c.ctrlPort) || !slices.Contains([]string{"app.js", "app.css"}, r.PathValue("file")) {
			http.NotFound(w, r)
			return
		}
		pageHeaders(w)
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + r.PathValue("file")
		files.ServeHTTP(w, r2)
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		if !hub.HostAllowed(r, c.ctrlPort) {
			http.Error(w, "forbidden Host", http.StatusForbidden)
			return
		}
		cookie, ok := c.ui.redeem(r.URL.Query().Get("token"))
		if !ok {
			pageHeaders(w)
			http.Error(w, "this login link was used already or has expired; run `hub geturl open` for a new one", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: cookie, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, MaxAge: int(cookieTTL / time.Second)})
		pageHeaders(w)
		http.Redirect(w, r, "/", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /ui/api/state", c.uiGate(c.uiState))
	mux.HandleFunc("GET /ui/api/browse", c.uiGate(c.browse))
	mux.HandleFunc("POST /ui/api/projects", c.uiGate(c.addProject))
	mux.HandleFunc("POST /ui/api/projects/{name}", c.uiGate(c.setProject))
	mux.HandleFunc("POST /ui/api/projects/{name}/remove", c.uiGate(c.removeProject))
	mux.HandleFunc("POST /ui/api/sessions", c.uiGate(c.newSession))
	mux.HandleFunc("POST /ui/api/sessions/{id}/{op}", c.uiGate(c.sessionOp))
	mux.HandleFunc("POST /ui/api/tunnel/{op}", c.uiGate(c.tunnelOp))
}

// uiState is everything the page shows, in one answer.
func (c *control) uiState(w http.ResponseWriter, r *http.Request) {
	list := c.mgr.List()
	sessions := make([]SessionInfo, len(list))
	for i, v := range list {
		sessions[i] = c.info(v)
	}
	state := map[string]any{
		"ok": true, "projects": c.mgr.Projects(), "sessions": sessions,
		"dataPort": c.dataPort, "publicOrigin": c.s.cfg.publicOrigin(), "initBase": c.base(),
		"tunnel": c.s.tunnel.Status(), "plugins": c.s.plugins(), "activity": c.s.activity.recent(),
	}
	if c.env.Hub != nil {
		state["hub"] = c.env.Hub.Status()
	}
	hub.WriteJSON(w, http.StatusOK, state)
}

// browse lists the subdirectories of a directory, for the project picker.
// It is operator-only (cookie), shows host paths on purpose, and never
// lists files.
func (c *control) browse(w http.ResponseWriter, r *http.Request) {
	dir := r.URL.Query().Get("path")
	if dir == "" {
		dir = c.env.Dirs.Home
	}
	real, err := filepath.EvalSymlinks(dir)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(real); err == nil && !fi.IsDir() {
			err = errNotDir
		}
	}
	if err != nil || !filepath.IsAbs(real) {
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "not_a_directory", "message": dir + " is not a directory"})
		return
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "unreadable", "message": err.Error()})
		return
	}
	type item struct {
		Name string `json:"name"`
		Path string `json:"path"`
	}
	var dirs []item
	for _, e := range entries {
		p := filepath.Join(real, e.Name())
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			dirs = append(dirs, item{e.Name(), p})
		}
		if len(dirs) >= 2000 {
			break
		}
	}
	sort.Slice(dirs, func(i, j int) bool {
		hi, hj := strings.HasPrefix(dirs[i].Name, "."), strings.HasPrefix(dirs[j].Name, ".")
		if hi != hj {
			return hj
		}
		return dirs[i].Name < dirs[j].Name
	})
	if dirs == nil {
		dirs = []item{}
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "path": real, "parent": filepath.Dir(real), "dirs": dirs})
}

var errNotDir = errors.New("not a directory")

func (c *control) tunnelOp(w http.ResponseWriter, r *http.Request) {
	switch r.PathValue("op") {
	case "start":
		if c.s.cfg.publicOrigin() != "" {
			hub.WriteJSON(w, http.StatusConflict, map[string]any{"ok": false, "error": "public_origin_configured",
				"message": "a public origin is configured and takes precedence; remove it to use a Quick Tunnel"})
			return
		}
		// Not cancelled with the request: an operator who closes the page
		// while cloudflared starts still gets the tunnel (the start is
		// bounded by its own timeout; the adapter's guard stays in ctx).
		st, err := c.s.tunnel.Start(context.WithoutCancel(r.Context()))
		if err != nil {
			hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "tunnel_failed", "message": err.Error(), "tunnel": st})
			return
		}
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "tunnel": st})
	case "stop":
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "tunnel": c.s.tunnel.Stop()})
	default:
		http.NotFound(w, r)
	}
}
