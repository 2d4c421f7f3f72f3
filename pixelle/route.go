package pixelle

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hubdev/hub/hub"
)

// browserMessageLocked handles pair.create, revoke and result frames.
func (s *Server) browserMessageLocked(p *peer, m *message, o *outbox) {
	sess := p.sess
	s.touchLocked()
	switch m.Type {
	case "pair.create":
		sess.code = hub.RandomHex(pairCodeBytes)
		sess.codeExpires = s.Now().Add(s.PairCodeTTL)
		o.send(p, struct {
			Type    string `json:"type"`
			Code    string `json:"code"`
			Expires int64  `json:"expires"`
		}{"pair.code", sess.code, sess.codeExpires.UnixMilli()})
		s.log.Info("pairing code issued", "session", sess.label)
	case "revoke":
		s.revokeLocked(sess, o)
		o.send(p, struct {
			Type string `json:"type"`
		}{"revoked"})
	case "result":
		if m.Problem != "" {
			o.send(p, newNotice("INVALID_RESULT", m.Problem))
			return
		}
		pe := sess.pending[m.ID]
		if pe == nil {
			// Unknown, finished, timed out, another session's, or its
			// agent left: never forwarded anywhere.
			o.send(p, newNotice("UNKNOWN_REQUEST", "no pending command with this id on this session"))
			return
		}
		pe.timer.Stop()
		delete(sess.pending, m.ID)
		o.result(pe, m)
	case "command":
		o.send(p, newNotice("NOT_ALLOWED", "only agents send commands"))
	default:
		o.send(p, newNotice("UNKNOWN_TYPE", "unknown message type"))
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
func (s *Server) revokeLocked(sess *session, o *outbox) {
	sess.agentToken, sess.code = "", ""
	for id, pe := range sess.pending {
		pe.timer.Stop()
		delete(sess.pending, id)
		o.fail(pe, "OUTCOME_UNKNOWN", msgUnknownRevoked)
	}
	for a := range sess.agents {
		s.closeLocked(a, closePolicy, "revoked", o)
	}
	s.log.Info("pairing revoked", "session", sess.label)
}

// agentMessageLocked routes an agent's command to its session's browser.
func (s *Server) agentMessageLocked(p *peer, m *message, o *outbox) {
	sess := p.sess
	s.touchLocked()
	s.env.Activity.AgentActivity()
	if m.Type != "command" {
		o.send(p, newNotice("UNKNOWN_TYPE", "agents send only command messages"))
		return
	}
	if m.Problem != "" {
		re := resultError{Type: "result", Error: errorObject{"INVALID_REQUEST", m.Problem}}
		if m.IDValid {
			re.ID = m.IDRaw
		}
		o.send(p, re)
		return
	}
	browser := sess.browser
	if browser == nil {
		o.send(p, newResultError(m.IDRaw, "BROWSER_OFFLINE", msgOffline))
		return
	}
	if len(sess.pending) >= s.MaxInFlight {
		o.send(p, newResultError(m.IDRaw, "BUSY", msgBusy))
		return
	}
	s.nextReq++
	relayID := fmt.Sprintf("r%d-%s", s.nextReq, hub.RandomHex(4))
	pe := &pending{relayID: relayID, clientID: m.IDRaw, agent: p}
	pe.timer = s.env.Guard.AfterFunc("command timeout", s.CommandTimeout, func() { s.commandTimeout(sess, relayID) })
	sess.pending[relayID] = pe
	o.sendRaw(browser, commandFrame(relayID, m.Command))
}

// commandFrame is the browser-bound command with the relay's id; the
// command object is copied byte for byte.
func commandFrame(relayID string, cmd json.RawMessage) []byte {
	id, _ := json.Marshal(relayID)
	b := make([]byte, 0, len(id)+len(cmd)+50)
	b = append(b, `{"type":"command","id":`...)
	b = append(b, id...)
	b = append(b, `,"command":`...)
	b = append(b, cmd...)
	return append(b, `,"actor":"agent"}`...)
}

// commandTimeout fails a command the browser did not answer in time.
func (s *Server) commandTimeout(sess *session, relayID string) {
	var o outbox
	s.mu.Lock()
	if pe := sess.pending[relayID]; pe != nil {
		delete(sess.pending, relayID)
		o.fail(pe, "OUTCOME_UNKNOWN", msgUnknownTimeout)
		s.log.Info("command timed out", "session", sess.label)
	}
	s.mu.Unlock()
	o.flush()
}

// errTooManySessions is returned when MaxSessions are live.
var errTooManySessions = errors.New("too many sessions; close unused Pixelle tabs or wait for idle sessions to expire")

// newSession creates a session for a browser of origin and returns its id
// and browser token.
func (s *Server) newSession(origin string) (id, token string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", "", errClosed
	}
	if len(s.sessions) >= s.MaxSessions {
		return "", "", errTooManySessions
	}
	s.nextSess++
	sess := newSession(hub.RandomToken(secretBytes), "s"+itoa(s.nextSess), hub.RandomToken(secretBytes), origin)
	s.sessions[sess.id] = sess
	s.armExpiryLocked(sess)
	s.touchLocked()
	s.log.Info("session created", "session", sess.label)
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
func (s *Server) pairCode(raw string) (pairResult, error) {
	code, ok := normalizeCode(raw)
	if !ok {
		return pairResult{}, errInvalidCode
	}
	var o outbox
	s.mu.Lock()
	defer func() { s.mu.Unlock(); o.flush() }()
	now := s.Now()
	var found *session
	for _, sess := range s.sessions {
		// Check every session so the time taken does not depend on which
		// one holds the code.
		if sess.browser != nil && sess.pairCodeValid(code, now) {
			found = sess
		}
	}
	if found == nil {
		s.refusedLocked("pair", "pairing refused: invalid or expired code")
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
		s.closeLocked(a, closePolicy, "replaced by a new pairing", &o)
	}
	o.send(found.browser, struct {
		Type string `json:"type"`
	}{"paired"})
	s.touchLocked()
	s.env.Activity.AgentActivity()
	s.log.Info("agent paired", "session", found.label)
	return pairResult{SessionID: found.id, Token: found.agentToken, URL: s.relayURLLocked()}, nil
}
