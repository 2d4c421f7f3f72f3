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

// publicOrigin is the configured public origin, normalised, or "".
func (g *Gateway) publicOrigin() string {
	if g.opts.PublicOrigin == nil {
		return ""
	}
	o, ok := hub.NormalizeOrigin(g.opts.PublicOrigin())
	if !ok {
		return ""
	}
	return o
}
