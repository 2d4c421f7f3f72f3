package gateway

import (
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// record is what one request's log line says. It holds no token, no path
// beyond the route, and no query value: queries carry file content and
// commands, paths carry capabilities.
type record struct {
	route    string
	tool     string
	cap      Capability
	sess     Session // nil until the token is known
	status   int
	code     string
	bytes    int
	fallback bool
	intent   string
	replayed bool
}

func (g *Gateway) logRequest(r *http.Request, rec *record, d time.Duration) {
	level := slog.LevelDebug
	if rec.status >= 400 {
		level = slog.LevelInfo
	}
	if !g.log.Enabled(r.Context(), level) {
		return // and box no arguments
	}
	g.log.Log(r.Context(), level, "geturl request",
		"method", r.Method, "route", rec.route, "cap", rec.cap.String(),
		"status", rec.status, "code", rec.code, "bytes", rec.bytes, "dur", d.Round(time.Microsecond))
}

// RedactPath replaces the token in a data-plane path with "…", for any log
// line that must mention a path (/v0/<tok>/r → /v0/…/r).
func RedactPath(path string) string {
	path, _, _ = strings.Cut(path, "?")
	rest, ok := strings.CutPrefix(path, "/v0/")
	if !ok {
		return path
	}
	for _, pre := range []string{"init/", "bootstrap/"} {
		if strings.HasPrefix(rest, pre) {
			return "/v0/" + pre + "…"
		}
	}
	if _, route, ok := strings.Cut(rest, "/"); ok {
		return "/v0/…/" + route
	}
	return "/v0/…"
}
