package stitchslop

import (
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
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

// maxRefusalKinds bounds the de-duplicated log; the least recent kind goes.
const maxRefusalKinds = 32

// Refusal is one de-duplicated kind of refused upgrade or handshake.
type Refusal struct {
	Reason string    `json:"reason"`
	Detail string    `json:"detail,omitempty"`
	Count  int       `json:"count"`
	First  time.Time `json:"first"`
	Last   time.Time `json:"last"`
}

// refusalLog counts every upgrade attempt and keeps refusals de-duplicated,
// so "the browser never tried" (nothing logged) and "it tried and was
// refused" (§5) can be told apart from /status, the CLI and MCP.
type refusalLog struct {
	mu       sync.Mutex
	attempts int
	byKey    map[string]*Refusal
}

func (l *refusalLog) attempt() {
	l.mu.Lock()
	l.attempts++
	l.mu.Unlock()
}

// add records one refusal and returns how many of its kind there have been.
// Every one is counted; its log line is thinned with hub.WorthLogging,
// since any web page can make a browser dial the bridge in a loop, and the
// first of each kind is always logged (§5: a logged refusal means the
// browser tried).
func (l *refusalLog) add(reason, detail string) int {
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
		return r.Count
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
	return 1
}

// snapshot returns the attempt count and the refusals, most recent first.
func (l *refusalLog) snapshot() (int, []Refusal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Refusal, 0, len(l.byKey))
	for _, r := range l.byKey {
		out = append(out, *r)
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
