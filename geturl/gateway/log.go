package gateway

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hubdev/hub/geturl/route"
)

// record is what one request's log line says. It holds no token, no path
// beyond the route, and no query value: queries carry file content and
// commands, paths carry capabilities.
type record struct {
	route    string
	tool     string
	cap      route.Capability
	sess     route.LiveSession // nil until the token is known
	status   int
	code     string
	bytes    int
	fallback bool
	intent   string
	replayed bool
}

// Thinning of the failures of requests that named no live token (a wrong
// Host, a method other than GET, and above all the opaque 404 of an
// unknown token): anyone who reaches the port can send those as fast as
// the loopback carries them (58,000 token guesses in 20 s took a log line
// each and rotated the whole log away, crash traces included). The first
// UnauthLogBurst of each status and code are logged as before; after
// that, one line per UnauthLogPeriod says how many more there were, for
// as long as they go on.
const (
	UnauthLogBurst  = 3
	UnauthLogPeriod = time.Minute
)

func (g *Gateway) logRequest(r *http.Request, rec *record, d time.Duration) {
	level := slog.LevelDebug
	if rec.status >= 400 {
		level = slog.LevelInfo
	}
	if !g.log.Enabled(r.Context(), level) {
		return // and box no arguments
	}
	args := []any{"method", clipMethod(r.Method), "route", rec.route, "cap", rec.cap.String(),
		"status", rec.status, "code", rec.code, "bytes", rec.bytes, "dur", d.Round(time.Microsecond)}
	if rec.sess == nil && level > slog.LevelDebug {
		g.unauth.Log(g.log, level, strconv.Itoa(rec.status)+" "+rec.code, "geturl request", args...)
		return
	}
	g.log.Log(r.Context(), level, "geturl request", args...)
}

// FlushLog writes the summaries of unauthenticated failures that are
// still due; the data plane calls it when it stops.
func (g *Gateway) FlushLog() { g.unauth.Flush() }

// clipMethod bounds a method for the log: any token up to the header
// limit is a syntactically valid method, and the request was refused.
func clipMethod(m string) string {
	const max = 16
	if len(m) <= max {
		return m
	}
	return m[:max] + "…"
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
