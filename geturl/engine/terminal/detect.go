package terminal

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/hubdev/hub/internal/lazyre"
)

// MaxDetected bounds detectedUrls and detectedPorts.
const MaxDetected = 8

// The expressions are compiled on first use, not at every hub start.
var (
	// Any http(s) URL; loopbackURL decides whether it counts.
	urlRe = lazyre.New(`(?i)\bhttps?://[^\s"'<>` + "`" + `\\]+`)
	// A bare loopback host:port without a scheme ("ready on localhost:3000").
	bareHostPortRe = lazyre.New(`(?i)(?:^|[\s(,'"=])((?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\]):\d{1,5})\b`)
	// Phrases that announce a listening port: "port 8000", "port: 3000",
	// "listening on :8080", "listening at 0.0.0.0:5000", "bound to *:4000".
	portPhraseRe = lazyre.New(`(?i)\bport\s*[:=#]?\s*(\d{2,5})\b|` +
		`\b(?:listen(?:ing)?|bound|serving|running)\s+(?:on|at|to)\s+(?:[a-z0-9.\-*]*|\[[0-9a-f:]*\])?:(\d{2,5})\b`)
)

// DetectURLs finds the loopback URLs and the listening ports announced in a
// startup transcript (escape sequences already removed), in order of first
// appearance, without duplicates, at most MaxDetected of each.
//
// URLs are reported as printed, with trailing punctuation trimmed, except
// that the wildcard bind addresses a server prints when it listens on every
// interface are rewritten to loopback (0.0.0.0 → 127.0.0.1, [::] → [::1]),
// since the caller reaches the server from this machine. A bare loopback
// "host:port" becomes an http:// URL. Ports come from those URLs and from
// phrases such as "port 8000" or "listening on :8080". A URL naming another
// host (Vite's "Network:" line with a LAN address, a registry, a docs link)
// is ignored, port and all.
func DetectURLs(transcript string) (urls []string, ports []int) {
	seenURL := map[string]bool{}
	seenPort := map[int]bool{}
	addPort := func(s string) {
		p, err := strconv.Atoi(s)
		if err != nil || p < 1 || p > 65535 || seenPort[p] || len(ports) >= MaxDetected {
			return
		}
		seenPort[p] = true
		ports = append(ports, p)
	}
	addURL := func(raw string) {
		u, port, ok := loopbackURL(raw)
		if !ok {
			return
		}
		if port != "" {
			addPort(port)
		}
		if seenURL[u] || len(urls) >= MaxDetected {
			return
		}
		seenURL[u] = true
		urls = append(urls, u)
	}
	for _, line := range strings.Split(transcript, "\n") {
		if len(line) > 4096 {
			line = line[:4096]
		}
		var hits []detectHit
		for _, m := range urlRe().FindAllStringIndex(line, MaxDetected) {
			hits = append(hits, detectHit{at: m[0], end: m[1], url: line[m[0]:m[1]]})
		}
		for _, m := range bareHostPortRe().FindAllStringSubmatchIndex(line, MaxDetected) {
			if !insideURL(m[2], hits) {
				hits = append(hits, detectHit{at: m[2], end: m[3], url: "http://" + line[m[2]:m[3]] + "/"})
			}
		}
		for _, m := range portPhraseRe().FindAllStringSubmatchIndex(line, MaxDetected) {
			for g := 2; g+1 < len(m); g += 2 {
				if m[g] >= 0 && !insideURL(m[g], hits) {
					hits = append(hits, detectHit{at: m[g], port: line[m[g]:m[g+1]]})
				}
			}
		}
		// Report in the order things appear on the line.
		for i := 1; i < len(hits); i++ {
			for j := i; j > 0 && hits[j].at < hits[j-1].at; j-- {
				hits[j], hits[j-1] = hits[j-1], hits[j]
			}
		}
		for _, h := range hits {
			if h.url != "" {
				addURL(h.url)
			} else {
				addPort(h.port)
			}
		}
	}
	return urls, ports
}

type detectHit struct {
	at, end int
	url     string // a URL candidate, or
	port    string // a port from a phrase
}

func insideURL(at int, hits []detectHit) bool {
	for _, h := range hits {
		if h.url != "" && at >= h.at && at < h.end {
			return true
		}
	}
	return false
}

// loopbackURL trims punctuation that ends a sentence rather than the URL,
// checks that the URL names this machine (localhost, *.localhost, a
// loopback or wildcard IP) with a valid port if any, lowercases scheme and
// host, and rewrites wildcard bind addresses to loopback.
func loopbackURL(raw string) (u, port string, ok bool) {
	raw = strings.TrimRight(raw, ".,;:!?)]}>'\"")
	if strings.Count(raw, "[") > strings.Count(raw, "]") {
		raw += "]" // the trim took the closing bracket of [::1]
	}
	p, err := url.Parse(raw)
	if err != nil || p.User != nil || (p.Scheme != "http" && p.Scheme != "https") {
		return "", "", false
	}
	host, port := strings.ToLower(p.Hostname()), p.Port()
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", "", false
		}
	}
	switch {
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
	case host == "0.0.0.0":
		host = "127.0.0.1"
	case host == "::":
		host = "::1"
	default:
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.IsLoopback() {
			return "", "", false
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	p.Scheme, p.Host = strings.ToLower(p.Scheme), host
	return p.String(), port, true
}
