package stitchslop

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"

	"github.com/hubdev/hub/hub"
)

// Who may connect (issue 28, as the app's own plugin admits): the bridge's
// own origin, plus any production or loopback site this machine holds a
// pairing for in the config dir (or a token armed for). Admission only
// opens the upgrade: the page must still present that site's own secret
// (or its armed token) in the handshake, checked against the pairings
// stored for the origin its browser sent. A hostile page cannot claim a
// paired site's origin (the browser sets Origin), and a local process
// that forges one still needs that site's secret, which lives only as a
// hash in a 0600 file. Nothing else is admitted: a site neither
// production nor loopback is never, whatever pairing.json holds.

// ProductionOrigins are the Stitch Slop app's own sites.
var ProductionOrigins = []string{DefaultOrigin, "https://stitchslop.com"}

// maxArmedSites bounds the tokens armed at once (one per site).
const maxArmedSites = 16

// siteKind says why an origin other than the bridge's own may be
// admitted: "production", "loopback", or "" (never).
func siteKind(origin string) string {
	if slices.Contains(ProductionOrigins, origin) {
		return "production"
	}
	u, err := url.Parse(origin)
	if err != nil {
		return ""
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return "loopback"
	}
	return ""
}

// pageOrigin is the normalised origin of a page's upgrade: exactly one
// Origin header, compared case-insensitively with a trailing slash and a
// default port ignored (§2.2). "" when there is none usable.
func pageOrigin(r *http.Request) string {
	v := r.Header.Values("Origin")
	if len(v) != 1 {
		return ""
	}
	if n, ok := hub.NormalizeOrigin(v[0]); ok {
		return n
	}
	return ""
}

// admits reports whether a page of origin may upgrade.
func (r *run) admits(origin string) bool {
	if origin == "" {
		return false
	}
	if origin == r.s.origin {
		return true
	}
	if siteKind(origin) == "" {
		return false
	}
	return r.s.armedFor(origin) != "" || r.pairings.Paired(origin)
}

// pairedSites lists the sites a page may come from with a stored pairing:
// the bridge's own origin and the production and loopback sites
// pairing.json holds, sorted, own first.
func (r *run) pairedSites() []string {
	out := []string{}
	for _, o := range r.pairings.PairedOrigins() {
		if o == r.s.origin || siteKind(o) != "" {
			out = append(out, o)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i] == r.s.origin && out[j] != r.s.origin })
	return out
}

// checkSite is a site a token may be armed for: the bridge's own, or a
// production or loopback site.
func (s *Server) checkSite(origin string) (string, error) {
	if origin == "" {
		return s.origin, nil
	}
	n, ok := hub.NormalizeOrigin(origin)
	if !ok {
		return "", fmt.Errorf("origin must be an origin like https://www.stitchslop.com, got %q", clip(origin, 80))
	}
	if n != s.origin && siteKind(n) == "" {
		return "", fmt.Errorf("%s is neither this bridge's site (%s) nor a Stitch Slop production or loopback site, so no page of it is ever admitted", n, s.origin)
	}
	return n, nil
}
