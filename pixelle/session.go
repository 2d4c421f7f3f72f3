package pixelle

import (
	"encoding/json"
	"time"

	"github.com/hubdev/hub/hub"
)

// Credential sizes: 32 random bytes (256 bits) for session ids and tokens,
// above the contract's 192-bit floor; 6 bytes for pairing codes.
const (
	secretBytes   = 32
	pairCodeBytes = 6
)

// session is one browser tab's relay state. All fields are guarded by
// relay.mu.
type session struct {
	id           string
	label        string // "s<N>": the only session name that reaches logs
	browserToken string
	agentToken   string // "" while unpaired or after revoke
	origin       string // normalised Origin recorded at creation

	browser *conn
	agents  map[*conn]struct{}

	code        string // current pairing code, "" if none
	codeExpires time.Time

	pending map[string]*pending // by relay request id
	expiry  *time.Timer         // runs while no browser is connected
	// expiryGen numbers the armed expiry timer, so a timer that fired
	// while its period was being replaced recognises itself as stale.
	expiryGen uint64
}

// pending is one routed command waiting for the browser's result.
type pending struct {
	relayID  string
	clientID json.RawMessage // the agent's id, verbatim (message.IDRaw)
	agent    *conn           // the agent socket that sent it; nil for an in-process caller
	// local is the in-process caller's (ToolBridge), buffered 1: an entry
	// is answered once, when it leaves the session's pending map.
	local chan relayAnswer
	timer *time.Timer
}

// relayAnswer is a result for an in-process caller: the browser's result
// or error object (or a relay-made error), byte for byte.
type relayAnswer struct {
	result, err json.RawMessage
}

// answer hands a to the in-process caller after the lock is released.
func (pe *pending) answer(o *outbox, a relayAnswer) {
	o.add(outItem{local: pe.local, answer: a})
}

func newSession(id, label, browserToken, origin string) *session {
	return &session{
		id: id, label: label, browserToken: browserToken, origin: origin,
		agents:  map[*conn]struct{}{},
		pending: map[string]*pending{},
	}
}

// stopTimers stops the expiry and every pending timer.
func (sess *session) stopTimers() {
	if sess.expiry != nil {
		sess.expiry.Stop()
		sess.expiry = nil
	}
	for id, p := range sess.pending {
		p.timer.Stop()
		delete(sess.pending, id)
		if p.local != nil { // agent sockets learn it from their close
			b, _ := json.Marshal(errorObject{"OUTCOME_UNKNOWN", msgUnknownShutdown})
			p.local <- relayAnswer{err: b}
		}
	}
}

// pairCodeValid reports whether code (already normalised) is the session's
// live, unexpired code. Constant time in the code's contents.
func (sess *session) pairCodeValid(code string, now time.Time) bool {
	return sess.code != "" && now.Before(sess.codeExpires) && hub.SecretEqual(code, sess.code)
}
