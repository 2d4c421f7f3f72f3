package gateway

import (
	"net/http"
	"strings"

	"github.com/hubdev/hub/hub"
)

// origin decides whether a request's Host is one the data plane answers
// and returns the origin the agent reached it through, which every base and
// recovery URL then starts with.
//
// Two kinds of Host are accepted: exactly the configured public origin's
// host (the tunnel forwards the agent's Host; a default port written out,
// :443 for https or :80 for http, is the same host), or 127.0.0.1/localhost
// with the bound port (a local agent, and the tunnel when it rewrites Host).
// Anything else is refused, so a web page that rebinds its own name to
// 127.0.0.1 cannot drive the gateway from a browser.
func (g *Gateway) origin(r *http.Request) (string, bool) {
	host := strings.ToLower(r.Host)
	if host == g.loopHost && host != "" {
		return g.loopOrigin, true // the usual local Host, without building the string again
	}
	if po := g.publicOrigin(); po != "" {
		scheme, poHost, _ := strings.Cut(po, "://")
		if host == poHost || (scheme == "https" && host == poHost+":443") || (scheme == "http" && host == poHost+":80") {
			return po, true
		}
	}
	if g.opts.Port > 0 && hub.HostAllowed(r, g.opts.Port) {
		return "http://" + host, true
	}
	return "", false
}

// publicOrigin is the configured public origin, normalised, or "". The
// last normalisation is remembered: the origin changes only when a tunnel
// restarts, and parsing it as a URL on every request was measurable.
func (g *Gateway) publicOrigin() string {
	if g.opts.PublicOrigin == nil {
		return ""
	}
	raw := g.opts.PublicOrigin()
	if raw == "" {
		return ""
	}
	if c := g.po.Load(); c != nil && c.raw == raw {
		return c.norm
	}
	o, ok := hub.NormalizeOrigin(raw)
	if !ok {
		o = ""
	}
	g.po.Store(&normalized{raw: raw, norm: o})
	return o
}

// normalized is one public origin as configured and as normalised.
type normalized struct{ raw, norm string }
