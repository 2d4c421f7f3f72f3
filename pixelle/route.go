package pixelle

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/jsonw"
)

// browserMessageLocked handles pair.create, revoke and result frames.
func (c *conn) browserMessageLocked(m *message, o *outbox) {
	rl, sess := c.rl, c.sess
	rl.touchLocked()
	switch m.Type {
	case "pair.create":
		sess.code = hub.RandomHex(pairCodeBytes)
		sess.codeExpires = rl.s.Now().Add(rl.s.PairCodeTTL)
		o.send(c, struct {
			Type    string `json:"type"`
			Code    string `json:"code"`
			Expires int64  `json:"expires"`
		}{"pair.code", sess.code, sess.codeExpires.UnixMilli()})
		rl.log.Info("pairing code issued", "session", sess.label)
	case "revoke":
		rl.revokeLocked(sess, o)
		o.send(c, struct {
			Type string `json:"type"`
		}{"revoked"})
	case "result":
		if m.Problem != "" {
			o.send(c, newNotice("INVALID_RESULT", m.Problem))
			return
		}
		pe := sess.pending[m.ID]
		if pe == nil {
			// Unknown, finished, timed out, another session's, or its
			// agent left: never forwarded anywhere.
			o.send(c, newNotice("UNKNOWN_REQUEST", "no pending command with this id on this session"))
			return
		}
		pe.timer.Stop()
		delete(sess.pending, m.ID)
		o.result(pe, m)
	case "command":
		o.send(c, newNotice("NOT_ALLOWED", "only agents send commands"))
	default:
		o.send(c, newNotice("UNKNOWN_TYPE", "unknown message type"))
	}
}

// resultFrame rebuilds the browser's result for the agent with the client's
// id restored; the result or error payload is copied byte for byte.
func resultFrame(id json.RawMessage, m *message) []byte {
	b := make([]byte, 0, len(id)+len(m.Result)+len(m.Error)+40)
	b = append(b, `{"type":"result","id":`...)
	b = append(b, id...)
	if m.Error != nil {
		b = append(b, `,"error":`...)
		b = append(b, m.Error...)
	} else {
		b = append(b, `,"result":`...)
		b = append(b, m.Result...)
	}
	return append(b, '}')
}

// revokeLocked deletes the agent token and code, fails pending commands and
// closes every agent of the session.
func (rl *relay) revokeLocked(sess *session, o *outbox) {
	sess.agentToken, sess.code = "", ""
	for id, pe := range sess.pending {
		pe.timer.Stop()
		delete(sess.pending, id)
		o.fail(pe, "OUTCOME_UNKNOWN", msgUnknownRevoked)
	}
	for a := range sess.agents {
		a.closeLocked(closePolicy, "revoked", o)
	}
	rl.log.Info("pairing revoked", "session", sess.label)
}

// agentMessageLocked routes an agent's command to its session's browser.
func (c *conn) agentMessageLocked(m *message, o *outbox) {
	rl, sess := c.rl, c.sess
	rl.touchLocked()
	rl.env.Activity.AgentActivity()
	if m.Type != "command" {
		o.send(c, newNotice("UNKNOWN_TYPE", "agents send only command messages"))
		return
	}
	if m.Problem != "" {
		re := resultError{Type: "result", Error: errorObject{"INVALID_REQUEST", m.Problem}}
		if m.IDValid {
			re.ID = m.IDRaw
		}
		o.send(c, re)
		return
	}
	browser := sess.browser
	if browser == nil {
		o.send(c, newResultError(m.IDRaw, "BROWSER_OFFLINE", msgOffline))
		return
	}
	if len(sess.pending) >= rl.s.MaxInFlight {
		o.send(c, newResultError(m.IDRaw, "BUSY", msgBusy))
		return
	}
	rl.nextReq++
	relayID := newRelayID(rl.nextReq)
	pe := &pending{relayID: relayID, clientID: m.IDRaw, agent: c}
	pe.timer = rl.env.Guard.AfterFunc("command timeout", rl.s.CommandTimeout, func() { rl.commandTimeout(sess, relayID) })
	sess.pending[relayID] = pe
	o.sendRaw(browser, commandFrame(relayID, m.Command))
}

// commandFrame is the browser-bound command with the relay's id; the
// command object is copied byte for byte.
func commandFrame(relayID string, cmd json.RawMessage) []byte {
	b := make([]byte, 0, len(relayID)+len(cmd)+52)
	b = append(b, `{"type":"command","id":`...)
	b = jsonw.StringHTML(b, relayID) // as json.Marshal writes it
	b = append(b, `,"command":`...)
	b = append(b, cmd...)
	return append(b, `,"actor":"agent"}`...)
}

// newRelayID names the n-th command the relay forwards to a browser:
// "r<n>-" and 4 random bytes in upper-case hex (what
// fmt.Sprintf("r%d-%s", n, hub.RandomHex(4)) makes), in one allocation.
func newRelayID(n uint64) string {
	var rnd [4]byte
	rand.Read(rnd[:]) // never fails (crypto/rand crashes the program instead)
	var buf [32]byte
	b := append(buf[:0], 'r')
	b = strconv.AppendUint(b, n, 10)
	b = append(b, '-')
	const digits = "0123456789ABCDEF"
	for _, x := range rnd {
		b = append(b, digits[x>>4], digits[x&0xf])
	}
	return string(b)
}

// commandTimeout fails a command the browser did not answer in time.
func (rl *relay) commandTimeout(sess *session, relayID string) {
	var o outbox
	rl.mu.Lock()
	if pe := sess.pending[relayID]; pe != nil {
		delete(sess.pending, relayID)
		o.fail(pe, "OUTCOME_UNKNOWN", msgUnknownTimeout)
		rl.log.Info("command timed out", "session", sess.label)
	}
	rl.mu.Unlock()
	o.flush()
}

// errTooManySessions is returned when MaxSessions are live.
var errTooManySessions = errors.New("too many sessions; close unused Pixelle tabs or wait for idle sessions to expire")

// newSession creates a session for a browser of origin and returns its id
// and browser token.
func (rl *relay) newSession(origin string) (id, token string, err error) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.closed {
		return "", "", errClosed
	}
	if len(rl.sessions) >= rl.s.MaxSessions {
		return "", "", errTooManySessions
	}
	rl.nextName++
	sess := newSession(hub.RandomToken(secretBytes), "s"+itoa(rl.nextName), hub.RandomToken(secretBytes), origin)
	rl.sessions[sess.id] = sess
	rl.armExpiryLocked(sess)
	rl.touchLocked()
	rl.log.Info("session created", "session", sess.label)
	return sess.id, sess.browserToken, nil
}

// pairResult is the 200 answer of POST /api/pair.
type pairResult struct {
	SessionID string `json:"sessionId"`
	Token     string `json:"token"`
	URL       string `json:"url"`
}

var errInvalidCode = errors.New("invalid or expired code")

// pairCode consumes a live code of a session whose browser is connected,
// issues a fresh agent token, closes the session's earlier agents and tells
// the browser it is paired.
func (rl *relay) pairCode(raw string) (pairResult, error) {
	code, ok := normalizeCode(raw)
	if !ok {
		return pairResult{}, errInvalidCode
	}
	var o outbox
	rl.mu.Lock()
	defer func() { rl.mu.Unlock(); o.flush() }()
	now := rl.s.Now()
	var found *session
	for _, sess := range rl.sessions {
		// Check every session so the time taken does not depend on which
		// one holds the code.
		if sess.browser != nil && sess.pairCodeValid(code, now) {
			found = sess
		}
	}
	if found == nil {
		rl.refusedLocked("pair", "pairing refused: invalid or expired code")
		return pairResult{}, errInvalidCode
	}
	found.code = ""
	found.agentToken = hub.RandomToken(secretBytes)
	for id, pe := range found.pending {
		pe.timer.Stop()
		delete(found.pending, id)
		o.fail(pe, "OUTCOME_UNKNOWN", msgUnknownRevoked)
	}
	for a := range found.agents {
		a.closeLocked(closePolicy, "replaced by a new pairing", &o)
	}
	o.send(found.browser, struct {
		Type string `json:"type"`
	}{"paired"})
	rl.touchLocked()
	rl.env.Activity.AgentActivity()
	rl.log.Info("agent paired", "session", found.label)
	return pairResult{SessionID: found.id, Token: found.agentToken, URL: rl.url}, nil
}
