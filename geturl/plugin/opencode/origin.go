package opencode

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// loopbackHosts are the only hosts the spec allows, as url.URL.Hostname
// returns them.
var loopbackHosts = map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}

// ErrNotLoopback is the refusal of an origin that is not loopback HTTP.
var ErrNotLoopback = errors.New("must be http://localhost, http://127.0.0.1 or http://[::1] with an optional port")

// ParseOrigin checks that raw is a loopback HTTP origin (a scheme, host and
// optional port, nothing else) and returns it normalised. Userinfo is
// refused so a password can never ride in the URL.
func ParseOrigin(raw string) (string, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(raw), "/"))
	if err != nil || u.Scheme != "http" || u.User != nil || u.Opaque != "" ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", ErrNotLoopback
	}
	host := strings.ToLower(u.Hostname())
	if !loopbackHosts[host] {
		return "", ErrNotLoopback
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", ErrNotLoopback
	}
	return "http://" + net.JoinHostPort(host, port), nil
}
