package route

import (
	"crypto/subtle"
	"sync"
)

// Capability is the kind of a capability token.
type Capability uint8

const (
	// CapInit fetches the Init contract.
	CapInit Capability = iota + 1
	// CapRead is the read base.
	CapRead
	// CapMutation is the mutation base.
	CapMutation
)

func (c Capability) String() string {
	switch c {
	case CapInit:
		return "init"
	case CapRead:
		return "read"
	case CapMutation:
		return "mutation"
	}
	return "none"
}

// LiveSession is one live session generation as the data plane sees it:
// what the route handlers see, its project's name and its tokens.
type LiveSession interface {
	Session
	// Project is the operator's name for the scope (never its host path).
	Project() string
	// Token returns the generation's token of a kind, "" when it has none
	// (no mutation token for a read-only session).
	Token(Capability) string
}

// TokenTable is the registry of live generations by their tokens, what the
// data plane looks a request's token up in (the session manager keeps
// one). It is safe for concurrent use.
type TokenTable struct {
	mu      sync.RWMutex
	entries []tokenEntry
}

type tokenEntry struct {
	token []byte
	kind  Capability
	sess  LiveSession
}

// Add registers every token of s.
func (t *TokenTable) Add(s LiveSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range []Capability{CapInit, CapRead, CapMutation} {
		if tok := s.Token(k); tok != "" {
			t.entries = append(t.entries, tokenEntry{token: []byte(tok), kind: k, sess: s})
		}
	}
}

// Remove forgets every token of s (a stopped or rotated generation).
func (t *TokenTable) Remove(s LiveSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	kept := t.entries[:0]
	for _, e := range t.entries {
		if e.sess != s {
			kept = append(kept, e)
		}
	}
	clear(t.entries[len(kept):])
	t.entries = kept
}

// compare is subtle.ConstantTimeCompare; a variable so a test can count
// that every entry is compared whatever matches.
var compare = subtle.ConstantTimeCompare

// Lookup compares token with every registered token, without stopping at a
// match, each comparison in constant time.
// Neither which tokens exist nor how much of one matched shows in its
// timing.
func (t *TokenTable) Lookup(token string) (LiveSession, Capability, bool) {
	tb := []byte(token)
	t.mu.RLock()
	defer t.mu.RUnlock()
	var (
		found LiveSession
		kind  Capability
	)
	for i := range t.entries {
		e := &t.entries[i]
		if compare(e.token, tb) == 1 {
			found, kind = e.sess, e.kind
		}
	}
	return found, kind, found != nil
}
