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

// OriginPolicy is an exact allow-list of normalised origins, optionally
// with every loopback origin (a local dev server on any port).
type OriginPolicy struct {
	allowed  map[string]bool
	loopback bool
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

// AllowLoopback also allows http(s) origins on 127.0.0.1, localhost and
// [::1], on any port. It returns p.
func (p *OriginPolicy) AllowLoopback() *OriginPolicy {
	p.loopback = true
	return p
}

// Allowed reports whether the origin header value matches the allow-list.
func (p *OriginPolicy) Allowed(origin string) bool {
	n, ok := NormalizeOrigin(origin)
	return ok && (p.allowed[n] || p.loopback && isLoopbackOrigin(n))
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
	v := r.Header.Values("Origin")
	return len(v) == 1 && p.Allowed(v[0])
}

// SetCORS echoes an allowed request origin and always sets Vary: Origin, so
// caches never serve one origin's answer to another. It never sends "*".
// It reports whether the origin was allowed.
func (p *OriginPolicy) SetCORS(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Add("Vary", "Origin")
	if !p.AllowedRequest(r) {
		return false
	}
	w.Header().Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
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
