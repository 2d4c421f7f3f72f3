package stitchslop

import (
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/hubdev/hub/hub"
)

// Refusal reasons kept in the refusal log.
const (
	ReasonOrigin      = "origin"
	ReasonHost        = "host"
	ReasonSpentToken  = "spent token"
	ReasonWrongPair   = "wrong pairing"
	ReasonUnknownTok  = "unknown token"
	ReasonNoCred      = "no credential"
	ReasonBadFrame    = "bad frame"
	ReasonAuthTimeout = "auth timeout"
	ReasonBusy        = "busy"
	ReasonCrowded     = "crowded"
)

// reasonFix is what to do about a refusal of reason (§5).
func reasonFix(reason string) string {
	switch reason {
	case ReasonOrigin:
		return "the page's site is neither this bridge's (--origin) nor a production or loopback site this machine is paired with: start the bridge with the site in the user's address bar, or arm a token for that site (pair with its origin)."
	case ReasonHost:
		return "a page reached the bridge under another host name (DNS rebinding?); the tab dials 127.0.0.1, so nothing is needed for it."
	case ReasonSpentToken:
		return "the token was redeemed already (tokens are one-time): ask the user to reopen the Stitch Slop panel for a fresh token, then pair with it."
	case ReasonWrongPair:
		return "the tab's stored pairing is not one this machine holds (another config dir, or removed): ask the user to reopen the panel for a fresh token, then pair with it."
	case ReasonUnknownTok:
		return "the tab sent a token this bridge was not given: pair with the token the panel shows (or set STITCHSLOP_TOKEN)."
	case ReasonNoCred:
		return "the tab sent neither token nor pairing: ask the user to reopen the Stitch Slop panel."
	case ReasonBadFrame:
		return "something that is not the tab's handshake reached the port; if the tab never attaches, reload it."
	case ReasonAuthTimeout:
		return "a socket opened and sent no handshake in time; reload the tab if it never attaches."
	case ReasonBusy:
		return "a second tab was refused because this bridge serves another: close the other tab, or call wait_for_connection with ownBridge: true for a bridge of its own."
	case ReasonCrowded:
		return "too many sockets waited to authenticate at once; the tab retries on its own."
	}
	return ""
}

// maxRefusalKinds bounds the de-duplicated log; the least recent kind goes.
const maxRefusalKinds = 32

// Refusal is one de-duplicated kind of refused upgrade or handshake.
type Refusal struct {
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
	// Fix says what to do about it (§5).
	Fix   string    `json:"fix"`
	Count int       `json:"count"`
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

// Thinning of the refusal log lines. Anything that reaches the port can be
// refused as fast as the loopback carries it, with a new Origin or Host
// each time, so the lines are thinned by reason, not by detail: the first
// RefusalLogBurst of a reason are logged in full (the first always: §5, a
// logged refusal means the browser tried), then one line per
// RefusalLogPeriod says how many more there were ("suppressed"), for as
// long as they go on. The refusal log itself still counts every one.
const (
	RefusalLogBurst  = 3
	RefusalLogPeriod = time.Minute
)

// refusalLog counts every upgrade attempt and keeps refusals de-duplicated,
// so "the browser never tried" (nothing logged) and "it tried and was
// refused" (§5) can be told apart from /status, the CLI and MCP.
type refusalLog struct {
	mu       sync.Mutex
	attempts int
	byKey    map[string]*Refusal
	thin     *hub.LogThinner // the log lines, by reason; made on first use
}

func (l *refusalLog) attempt() {
	l.mu.Lock()
	l.attempts++
	l.mu.Unlock()
}

// refuse records one refusal and logs msg with args at warn level through
// log, thinned by reason (RefusalLogBurst). Every one is counted.
func (l *refusalLog) refuse(log *slog.Logger, reason, detail, msg string, args ...any) {
	l.add(reason, detail)
	l.mu.Lock()
	if l.thin == nil {
		l.thin = &hub.LogThinner{Burst: RefusalLogBurst, Period: RefusalLogPeriod}
	}
	thin := l.thin
	l.mu.Unlock()
	thin.Warn(log, reason, msg, args...)
}

// flush writes the summaries still due; a run of the bridge that stops
// calls it, so a flood's count is not lost with the process.
func (l *refusalLog) flush() {
	l.mu.Lock()
	thin := l.thin
	l.mu.Unlock()
	if thin != nil {
		thin.Flush()
	}
}

// add records one refusal.
func (l *refusalLog) add(reason, detail string) {
	detail = clip(detail, 120)
	key := reason + "\x00" + detail
	now := time.Now().UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byKey == nil {
		l.byKey = map[string]*Refusal{}
	}
	if r := l.byKey[key]; r != nil {
		r.Count++
		r.Last = now
		return
	}
	if len(l.byKey) >= maxRefusalKinds {
		var oldest string
		var t time.Time
		for k, r := range l.byKey {
			if oldest == "" || r.Last.Before(t) {
				oldest, t = k, r.Last
			}
		}
		delete(l.byKey, oldest)
	}
	l.byKey[key] = &Refusal{Reason: reason, Detail: detail, Count: 1, First: now, Last: now}
}

// snapshot returns the attempt count and the refusals, most recent first.
func (l *refusalLog) snapshot() (int, []Refusal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Refusal, 0, len(l.byKey))
	for _, r := range l.byKey {
		rf := *r
		rf.Fix = reasonFix(rf.Reason)
		out = append(out, rf)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Last.After(out[j].Last) })
	return l.attempts, out
}

// clip makes an untrusted string safe to log and show: printable runes only,
// at most n bytes.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, s)
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
