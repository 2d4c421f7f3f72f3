package control

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/geturl/companion/extension"
	"github.com/hubdev/hub/hub"
)

// The control page: plain HTML, CSS and JS embedded in the binary (no build
// step, works from `go install` alone).
//
//go:embed ui
var uiFiles embed.FS

// SessionHeader carries the control page's session secret on every call of
// the page's API. A custom header, so any request from another origin
// needs a CORS preflight, which the control plane never grants.
const SessionHeader = "X-Geturl-Session"

// Login and session lifetimes and bounds (SessionTTL, MaxLoginBody and
// LegacyCookie are part of what the page's contract promises).
const (
	loginTTL     = 2 * time.Minute // a `hub geturl open` URL works once, briefly
	SessionTTL   = 12 * time.Hour  // from the login, not extended by use
	maxUISession = 32              // live page sessions; the oldest goes first
	maxLogins    = 32              // unspent login tokens; the oldest goes first
	MaxLoginBody = 1 << 10
	// LegacyCookie is the cookie earlier versions kept the page's session
	// in. Nothing reads it; the page only tells the browser to drop it.
	LegacyCookie = "geturl_ui"
)

// uiAuth holds the control page's one-time login tokens and its sessions,
// both only as hashes and only in memory: a session dies with the run
// that minted it.
type uiAuth struct {
	now func() time.Time

	mu       sync.Mutex
	logins   map[string]time.Time // hash of a login token → expiry
	sessions map[string]time.Time // hash of a session secret → expiry
}

func newUIAuth(now func() time.Time) *uiAuth {
	return &uiAuth{now: now, logins: map[string]time.Time{}, sessions: map[string]time.Time{}}
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// prune forgets expired entries of m, then the soonest to expire until
// there is room for one more under max.
func prune(m map[string]time.Time, now time.Time, max int) {
	for h, exp := range m {
		if !now.Before(exp) {
			delete(m, h)
		}
	}
	for len(m) >= max {
		var oldest string
		for h, exp := range m {
			if oldest == "" || exp.Before(m[oldest]) {
				oldest = h
			}
		}
		delete(m, oldest)
	}
}

// newLogin mints a one-time login token.
func (a *uiAuth) newLogin() string {
	tok := hub.RandomToken(24)
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	prune(a.logins, now, maxLogins)
	a.logins[hashOf(tok)] = now.Add(loginTTL)
	return tok
}

// redeem spends a login token and returns a new session secret.
func (a *uiAuth) redeem(tok string) (string, bool) {
	if tok == "" {
		return "", false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	h := hashOf(tok)
	exp, ok := a.logins[h]
	delete(a.logins, h)
	if !ok || !now.Before(exp) {
		return "", false
	}
	prune(a.sessions, now, maxUISession)
	secret := hub.RandomToken(32)
	a.sessions[hashOf(secret)] = now.Add(SessionTTL)
	return secret, true
}

// valid reports whether secret is a live session. The map is keyed by
// hash, so no comparison over secret bytes depends on how much of a guess
// matched.
func (a *uiAuth) valid(secret string) bool {
	if secret == "" {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.sessions[hashOf(secret)]
	return ok && a.now().Before(exp)
}

// logout ends a session.
func (a *uiAuth) logout(secret string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.sessions, hashOf(secret))
}

// sessionOf is the session secret r carries: exactly one SessionHeader.
// Cookies are never looked at.
func sessionOf(r *http.Request) string {
	if v := r.Header.Values(SessionHeader); len(v) == 1 {
		return v[0]
	}
	return ""
}

// uiAllowed is the page's request check before any session: the Host must
// be this loopback port (DNS rebinding), and a write needs an Origin equal
// to the page's own origin and fails closed without one.
func (c *Plane) uiAllowed(w http.ResponseWriter, r *http.Request) bool {
	if !hub.HostAllowed(r, c.ControlPort) {
		hub.WriteJSON(w, http.StatusForbidden, map[string]any{"ok": false, "error": "forbidden_host", "message": "Host must be 127.0.0.1 or localhost with this port"})
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if o := r.Header.Values("Origin"); len(o) != 1 || o[0] != "http://"+r.Host {
			hub.WriteJSON(w, http.StatusForbidden, map[string]any{"ok": false, "error": "forbidden_origin", "message": "changes are accepted only from the control page itself"})
			return false
		}
	}
	return true
}

// uiGate is the page's authentication: uiAllowed, then a live session in
// SessionHeader, for reads and writes alike.
func (c *Plane) uiGate(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !c.uiAllowed(w, r) {
			return
		}
		if !c.ui.valid(sessionOf(r)) {
			hub.WriteJSON(w, http.StatusUnauthorized, map[string]any{"ok": false, "error": "login_required", "message": "run `hub geturl open` for a login URL"})
			return
		}
		h(w, r)
	}
}

// pageHeaders keep the page from being framed, sniffed or cached, and let
// it run only its own script, which may not write markup from strings
// (Trusted Types): the session secret is in the page's script, so script
// injection is what would reach it.
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "+
		"frame-ancestors 'none'; base-uri 'none'; form-action 'none'; require-trusted-types-for 'script'; trusted-types 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// uiRoutes adds the page, its assets, the login and the page's API. The
// page and its assets hold no secret and are the same for everyone; the
// page's script logs in and keeps the session (see the README).
func (c *Plane) uiRoutes(mux *http.ServeMux) {
	static, _ := fs.Sub(uiFiles, "ui")
	files := http.FileServerFS(static)
	index, _ := uiFiles.ReadFile("ui/index.html")
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if !hub.HostAllowed(r, c.ControlPort) {
			http.Error(w, "forbidden Host", http.StatusForbidden)
			return
		}
		pageHeaders(w)
		http.SetCookie(w, &http.Cookie{Name: LegacyCookie, Path: "/", MaxAge: -1})
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(index)
	})
	mux.HandleFunc("GET /ui/{file}", func(w http.ResponseWriter, r *http.Request) {
		if !hub.HostAllowed(r, c.ControlPort) || !slices.Contains([]string{"app.js", "app.css"}, r.PathValue("file")) {
			http.NotFound(w, r)
			return
		}
		pageHeaders(w)
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + r.PathValue("file")
		files.ServeHTTP(w, r2)
	})
	mux.HandleFunc("GET /ui/companion.zip", func(w http.ResponseWriter, r *http.Request) {
		if !hub.HostAllowed(r, c.ControlPort) {
			http.NotFound(w, r)
			return
		}
		var zip bytes.Buffer
		if err := extension.Zip(&zip); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		pageHeaders(w)
		w.Header().Set("Content-Type", "application/zip")
		w.Header().Set("Content-Disposition", `attachment; filename="`+extension.ZipDir+`.zip"`)
		w.Write(zip.Bytes())
	})
	mux.HandleFunc("POST /ui/api/login", c.uiLogin)
	mux.HandleFunc("POST /ui/api/logout", c.uiGate(func(w http.ResponseWriter, r *http.Request) {
		c.ui.logout(sessionOf(r))
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
	}))
	mux.HandleFunc("GET /ui/api/state", c.uiGate(c.uiState))
	mux.HandleFunc("GET /ui/api/browse", c.uiGate(c.browse))
	mux.HandleFunc("POST /ui/api/projects", c.uiGate(c.addProject))
	mux.HandleFunc("POST /ui/api/projects/{name}", c.uiGate(c.setProject))
	mux.HandleFunc("POST /ui/api/projects/{name}/remove", c.uiGate(c.removeProject))
	mux.HandleFunc("POST /ui/api/sessions", c.uiGate(c.newSession))
	mux.HandleFunc("POST /ui/api/sessions/{id}/{op}", c.uiGate(c.sessionOp))
	mux.HandleFunc("POST /ui/api/tunnel/{op}", c.uiGate(c.tunnelOp))
	c.companionRoutes(mux, "/ui/api/companion", c.uiGate)
}

// uiLogin redeems the one-time token of a login URL (the page's script
// reads it from the URL's fragment, which no server ever sees) for a
// session secret the script keeps in the tab's sessionStorage.
func (c *Plane) uiLogin(w http.ResponseWriter, r *http.Request) {
	if !c.uiAllowed(w, r) {
		return
	}
	var req struct {
		Token string `json:"token"`
	}
	if err := hub.ReadJSONBody(r, MaxLoginBody, &req); err != nil {
		badRequest(w, err)
		return
	}
	secret, ok := c.ui.redeem(req.Token)
	if !ok {
		hub.WriteJSON(w, http.StatusUnauthorized, map[string]any{"ok": false, "error": "login_expired",
			"message": "this login link was used already or has expired; run `hub geturl open` for a new one"})
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "session": secret, "expiresIn": int(SessionTTL / time.Second)})
}

// uiState is everything the page shows, in one answer.
func (c *Plane) uiState(w http.ResponseWriter, r *http.Request) {
	list := c.Sessions.List()
	sessions := make([]SessionInfo, len(list))
	for i, v := range list {
		sessions[i] = c.info(v)
	}
	state := map[string]any{
		"ok": true, "projects": c.Sessions.Projects(), "sessions": sessions,
		"dataPort": c.DataPort, "publicOrigin": c.ConfiguredOrigin, "initBase": c.base(),
		"tunnel": c.Tunnel.Status(), "plugins": c.Plugins(), "activity": c.Activity.Recent(),
	}
	if c.Companion != nil {
		state["companion"] = c.Companion.Overview()
	}
	if c.Env.Hub != nil {
		state["hub"] = c.Env.Hub.Status()
	}
	hub.WriteJSON(w, http.StatusOK, state)
}

// browse lists the subdirectories of a directory, for the project picker.
// It is operator-only (the page's session), shows host paths on purpose, and never
// lists files.
func (c *Plane) browse(w http.ResponseWriter, r *http.Request) {
	dir := r.URL.Query().Get("path")
	if dir == "" {
		dir = c.Env.Dirs.Home
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

func (c *Plane) tunnelOp(w http.ResponseWriter, r *http.Request) {
	switch r.PathValue("op") {
	case "start":
		if c.ConfiguredOrigin != "" {
			hub.WriteJSON(w, http.StatusConflict, map[string]any{"ok": false, "error": "public_origin_configured",
				"message": "a public origin is configured and takes precedence; remove it to use a Quick Tunnel"})
			return
		}
		// Not cancelled with the request: an operator who closes the page
		// while cloudflared starts still gets the tunnel (the start is
		// bounded by its own timeout; the adapter's guard stays in ctx).
		st, err := c.Tunnel.Start(context.WithoutCancel(r.Context()))
		if err != nil {
			hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "tunnel_failed", "message": err.Error(), "tunnel": st})
			return
		}
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "tunnel": st})
	case "stop":
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "tunnel": c.Tunnel.Stop()})
	default:
		http.NotFound(w, r)
	}
}
