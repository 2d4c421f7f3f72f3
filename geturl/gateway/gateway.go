package gateway

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
	"github.com/hubdev/hub/hub"
)

// Options configure a Gateway.
type Options struct {
	Sessions Sessions
	Kernel   *kernel.Kernel
	// Port is the loopback port the data plane is bound to.
	Port int
	// PublicOrigin returns the current public origin (the tunnel's
	// https://host), or "" when there is none. It is read per request
	// because a managed tunnel's hostname changes.
	PublicOrigin func() string
	// Logger receives one line per request, never with a token or a query
	// value in it; the failures of requests that named no live token are
	// summarized once a flood of them starts (see logRequest). Nil
	// discards.
	Logger *slog.Logger
	// Observe, when set, is called after every authenticated request (a
	// live token; opaque 404s are not reported) with what the activity
	// view may show: no token, no query text.
	Observe func(Event)
}

// Event is one authenticated request, for the operator's activity view.
type Event struct {
	Session    route.LiveSession
	Capability route.Capability
	Route      string // "init", a declared route ("/r"), or "unknown"
	Tool       string // the route's tool ("read"), "" for init and unknown
	Status     int
	ErrorCode  string // "" when the answer was ok
	Bytes      int
	// Fallback is set when the answer led with rangeFallback.
	Fallback bool
	// Intent is a journaled request's call id (a digest, never content);
	// Replayed says the request found an existing intent and ran nothing.
	Intent   string
	Replayed bool
	Duration time.Duration
}

// Gateway is the data-plane handler.
type Gateway struct {
	opts Options
	log  *slog.Logger
	// loopHost is 127.0.0.1:<port> and loopOrigin its origin, built once.
	loopHost, loopOrigin string
	po                   atomic.Pointer[normalized] // see publicOrigin
	// unauth thins the log lines of requests that named no live token.
	unauth hub.LogThinner
	compat compatRoutes // see compatTable
	inits  initCache    // rendered Init answers, see initAnswer
}

// New returns the handler.
func New(opts Options) *Gateway {
	g := &Gateway{opts: opts, log: opts.Logger, unauth: hub.LogThinner{Burst: UnauthLogBurst, Period: UnauthLogPeriod}}
	if opts.Port > 0 {
		g.loopHost = "127.0.0.1:" + strconv.Itoa(opts.Port)
		g.loopOrigin = "http://" + g.loopHost
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	return g
}

var _ http.Handler = (*Gateway)(nil)

// ServeHTTP checks Host and method, authenticates the token in the path and
// answers Init or a route.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &record{route: "-"}
	defer func() {
		d := time.Since(start)
		g.logRequest(r, rec, d)
		if rec.sess != nil && g.opts.Observe != nil {
			g.opts.Observe(Event{Session: rec.sess, Capability: rec.cap, Route: rec.route, Tool: rec.tool,
				Status: rec.status, ErrorCode: rec.code, Bytes: rec.bytes, Fallback: rec.fallback,
				Intent: rec.intent, Replayed: rec.replayed, Duration: d})
		}
	}()

	origin, ok := g.origin(r)
	if !ok {
		rec.status, rec.code = http.StatusForbidden, "host_not_allowed"
		rec.bytes = writeJSON(w, r, http.StatusForbidden, &transport.Error{Code: "host_not_allowed",
			Detail: "the Host header names neither the public origin nor the bound loopback address"})
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rec.status, rec.code = http.StatusMethodNotAllowed, transport.CodeMethodNotAllowed
		w.Header().Set("Allow", "GET, HEAD")
		rec.bytes = writeJSON(w, r, http.StatusMethodNotAllowed, &transport.Error{Code: transport.CodeMethodNotAllowed,
			Detail: "only GET (and HEAD) are served", Hint: "every operation is a GET: put it in the URL"})
		return
	}
	target := r.RequestURI
	if target == "" {
		target = r.URL.RequestURI()
	}
	path, _, _ := strings.Cut(target, "?")
	if rest, ok := cutAbsolute(path); ok {
		path = rest
	}
	p, ok := parsePath(path)
	if !ok {
		g.notFound(w, r, rec)
		return
	}
	sess, kind, ok := g.opts.Sessions.Lookup(p.token)
	if !ok || (p.init != (kind == route.CapInit)) {
		g.notFound(w, r, rec)
		return
	}
	rec.cap, rec.sess = kind, sess
	if p.init {
		rec.route, rec.status = "init", http.StatusOK
		if terr := initQuery(target, origin, path); terr != nil {
			rec.code = terr.Code
			rec.bytes = writeJSON(w, r, http.StatusOK, terr)
			return
		}
		a := g.initAnswer(origin, sess)
		rec.bytes = len(a.body)
		writeLen(w, http.StatusOK, ctypeJSON, a.body, a.clen)
		return
	}
	rec.route = p.route
	g.serveRoute(w, r, rec, target, origin, sess, kind, p.route)
}

// reqPath is an authenticated-looking path, before the token is checked.
type reqPath struct {
	init  bool
	token string
	route string // "/r"; "" for /v0/<tok> alone
}

// parsePath recognises /v0/init/<tok>, /v0/bootstrap/<tok> and
// /v0/<tok>[/<route>].
func parsePath(path string) (reqPath, bool) {
	rest, ok := strings.CutPrefix(path, "/v0/")
	if !ok {
		return reqPath{}, false
	}
	for _, pre := range []string{"init/", "bootstrap/"} {
		if tok, ok := strings.CutPrefix(rest, pre); ok {
			return reqPath{init: true, token: tok}, tok != "" && !strings.Contains(tok, "/")
		}
	}
	tok, _, hasRoute := strings.Cut(rest, "/")
	if tok == "" {
		return reqPath{}, false
	}
	p := reqPath{token: tok}
	if hasRoute {
		p.route = rest[len(tok):] // "/r", sliced rather than built
	}
	return p, true
}

// cutAbsolute reduces an absolute-form request path (a proxy's) to its path.
func cutAbsolute(p string) (string, bool) {
	for _, s := range []string{"http://", "https://"} {
		if len(p) >= len(s) && strings.EqualFold(p[:len(s)], s) {
			rest := p[len(s):]
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				return rest[i:], true
			}
			return "/", true
		}
	}
	return p, false
}

// bases builds the session's exact bases on the origin the agent used.
func bases(origin string, s route.LiveSession) route.Bases {
	b := route.Bases{Read: origin + "/v0/" + s.Token(route.CapRead)}
	if tok := s.Token(route.CapMutation); tok != "" && s.Permissions().Mutations() {
		b.Mutation = origin + "/v0/" + tok
	}
	return b
}
