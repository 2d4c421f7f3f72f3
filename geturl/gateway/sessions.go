package gateway

import (
	"crypto/subtle"
	"sync"

	"github.com/hubdev/hub/geturl/kernel"
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

// Session is one live session generation as the gateway sees it.
type Session interface {
	kernel.Session
	// Project is the operator's name for the scope (never its host path).
	Project() string
	// Token returns the generation's token of a kind, "" when it has none
	// (no mutation token for a read-only session).
	Token(Capability) string
}

// Sessions finds the live session generation a token belongs to.
// Implementations must not leak through timing which tokens exist or how
// much of a token matched: compare every candidate in constant time, as
// TokenTable does.
type Sessions interface {
	Lookup(token string) (Session, Capability, bool)
}

// TokenTable is an in-memory Sessions: the registry of live generations.
// It is safe for concurrent use.
type TokenTable struct {
	mu      sync.RWMutex
	entries []tokenEntry
}

type tokenEntry struct {
	token []byte
	kind  Capability
	sess  Session
}

// Add registers every token of s.
func (t *TokenTable) Add(s Session) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range []Capability{CapInit, CapRead, CapMutation} {
		if tok := s.Token(k); tok != "" {
			t.entries = append(t.entries, tokenEntry{token: []byte(tok), kind: k, sess: s})
		}
	}
}

// Remove forgets every token of s (a stopped or rotated generation).
func (t *TokenTable) Remove(s Session) {
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
func (t *TokenTable) Lookup(token string) (Session, Capability, bool) {
	tb := []byte(token)
	t.mu.RLock()
	defer t.mu.RUnlock()
	var (
		found Session
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
