package hub

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// NormalizeOrigin returns the canonical form of a web origin — lower-case
// scheme and host, no trailing slash, default ports dropped — and whether s
// is a usable origin at all. A missing origin and the literal "null" that
// sandboxed frames send are never usable, so they never match anything.
func NormalizeOrigin(s string) (string, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimRight(s, "/")
	if s == "" || strings.EqualFold(s, "null") || len(s) > 2048 {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", false
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", false
		}
		if (scheme == "http" && n == 80) || (scheme == "https" && n == 443) {
			port = ""
		} else {
			port = strconv.Itoa(n)
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}

// OriginPolicy is an exact allow-list of canonical origins, optionally
// with every loopback origin (a local dev server on any port). Configured
// origins are canonicalised once, when the policy is built; a request's
// Origin header must then equal one of them byte for byte. Browsers always
// send the canonical serialisation (RFC 6454 §6.2), so a header in any
// other spelling ("HTTPS://App.Example/", ":443") did not come from a
// browser's own Origin logic and is refused rather than normalised.
type OriginPolicy struct {
	allowed  map[string]bool
	loopback bool
	lenient  bool
}

// NewOriginPolicy builds a policy from origins; unusable entries are ignored
// (config validation rejects them before this point).
func NewOriginPolicy(origins ...string) *OriginPolicy {
	p := &OriginPolicy{allowed: make(map[string]bool, len(origins))}
	for _, o := range origins {
		if n, ok := NormalizeOrigin(o); ok {
			p.allowed[n] = true
		}
	}
	return p
}

// AllowLoopback also allows canonical http(s) origins on 127.0.0.1,
// localhost and [::1], on any port. It returns p.
func (p *OriginPolicy) AllowLoopback() *OriginPolicy {
	p.loopback = true
	return p
}

// Lenient makes the policy normalise a request's Origin before comparing
// it (case-insensitive scheme and host, a trailing slash and a default
// port ignored), for a protocol whose contract says so (Stitch Slop §2.2).
// A missing Origin and "null" still never match. It returns p.
func (p *OriginPolicy) Lenient() *OriginPolicy {
	p.lenient = true
	return p
}

// Allowed reports whether the origin header value is one of the allowed
// canonical origins, exactly.
func (p *OriginPolicy) Allowed(origin string) bool {
	return p.canonical(origin) != ""
}

// canonical returns the allowed origin origin names — which, when allowed,
// is origin itself — or "" when it is not allowed.
func (p *OriginPolicy) canonical(origin string) string {
	if p.allowed[origin] {
		return origin
	}
	if p.lenient {
		if n, ok := NormalizeOrigin(origin); ok && (p.allowed[n] || p.loopback && isLoopbackOrigin(n)) {
			return n
		}
		return ""
	}
	if !p.loopback {
		return ""
	}
	// A loopback origin must already be in canonical form: the
	// normalised value is used only to check that it is.
	if n, ok := NormalizeOrigin(origin); ok && n == origin && isLoopbackOrigin(n) {
		return n
	}
	return ""
}

// isLoopbackOrigin reports whether a normalised origin names a loopback host.
func isLoopbackOrigin(n string) bool {
	u, err := url.Parse(n)
	if err != nil {
		return false
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}

// AllowedRequest reports whether r carries an allowed Origin header. Exactly
// one Origin header must be present.
func (p *OriginPolicy) AllowedRequest(r *http.Request) bool {
	return p.requestOrigin(r) != ""
}

// requestOrigin is the allowed canonical origin of r, or "".
func (p *OriginPolicy) requestOrigin(r *http.Request) string {
	v := r.Header.Values("Origin")
	if len(v) != 1 {
		return ""
	}
	return p.canonical(v[0])
}

// SetCORS echoes an allowed request origin and always sets Vary: Origin, so
// caches never serve one origin's answer to another. It never sends "*".
// The echoed value is the policy's canonical origin, not the raw header.
// It reports whether the origin was allowed.
func (p *OriginPolicy) SetCORS(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Add("Vary", "Origin")
	o := p.requestOrigin(r)
	if o == "" {
		return false
	}
	w.Header().Set("Access-Control-Allow-Origin", o)
	return true
}

// HostAllowed is the DNS-rebinding check: the Host header must name the
// loopback address actually bound (127.0.0.1 or localhost, with the bound
// port). A page on evil.example that rebinds its name to 127.0.0.1 still
// sends Host: evil.example and is refused.
func HostAllowed(r *http.Request, port int) bool {
	host, p, err := net.SplitHostPort(r.Host)
	if err != nil {
		return false
	}
	if p != strconv.Itoa(port) {
		return false
	}
	switch strings.ToLower(host) {
	case "127.0.0.1", "localhost":
		return true
	}
	return false
}

// HasOrigin reports whether the request carries any Origin header. Control
// endpoints refuse such requests before they look at a key: shells and
// agents send none, pages always do.
func HasOrigin(r *http.Request) bool {
	return len(r.Header.Values("Origin")) > 0
}
