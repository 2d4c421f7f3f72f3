package pixelle

import (
	"encoding/json"
	"errors"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// WebSocket close codes the relay uses.
const (
	closePolicy    = 1008 // invalid credentials, malformed JSON, auth timeout, revoked
	closeTryLater  = 1013 // a second browser for a session that already has one
	closeGoingAway = 1001
)

// outbox collects frames and closes decided under Server.mu and performs
// them after the lock is released, so a slow peer never stalls the relay.
type outbox []func()

func (o *outbox) send(p *peer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	o.sendRaw(p, b)
}

// sendRaw queues b for p. Called under Server.mu. A frame for a peer whose
// ready is still being written is held and written after it (see
// Server.release), so nothing overtakes a ready.
func (o *outbox) sendRaw(p *peer, b []byte) {
	if p.authed && !p.told {
		p.held = append(p.held, b)
		return
	}
	o.write(p, b)
}

// write queues b for p unconditionally: the ready itself.
func (o *outbox) write(p *peer, b []byte) {
	c := p.conn
	*o = append(*o, func() { _ = c.WriteText(b) })
}

func (o *outbox) close(p *peer, code uint16, reason string) {
	c := p.conn
	*o = append(*o, func() { c.Close(code, reason) })
}

// fail queues a relay-made error for whoever sent pe: its agent socket,
// or the in-process caller (ToolBridge) waiting on pe.local.
func (o *outbox) fail(pe *pending, code, msg string) {
	if pe.local != nil {
		b, _ := json.Marshal(errorObject{code, msg})
		pe.answer(o, relayAnswer{err: b})
		return
	}
	o.send(pe.agent, newResultError(pe.clientID, code, msg))
}

// result queues the browser's result m for whoever sent pe, unchanged.
func (o *outbox) result(pe *pending, m *message) {
	if pe.local != nil {
		pe.answer(o, relayAnswer{result: m.Result, err: m.Error})
		return
	}
	o.sendRaw(pe.agent, resultFrame(pe.clientID, m))
}

func (o outbox) flush() {
	for _, f := range o {
		f()
	}
}

// errorObject is the error payload of a relay-made result.
type errorObject struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// resultError is {"type":"result","id":...,"error":{...}} for the agent.
type resultError struct {
	Type  string          `json:"type"`
	ID    json.RawMessage `json:"id"` // verbatim; nil is null
	Error errorObject     `json:"error"`
}

func newResultError(id json.RawMessage, code, msg string) resultError {
	return resultError{Type: "result", ID: id, Error: errorObject{code, msg}}
}

// notice is {"type":"error","error":{...}}: an answer to a frame the relay
// will not act on, for frames that have no request id to answer.
type notice struct {
	Type  string      `json:"type"`
	Error errorObject `json:"error"`
}

func newNotice(code, msg string) notice {
	return notice{Type: "error", Error: errorObject{code, msg}}
}

// Messages an agent receives when the relay gives up on a command.
const (
	msgOffline         = "no Pixelle browser is connected to this session; ask the person to open Pixelle and click Connect locally"
	msgBusy            = "too many commands in flight for this session; wait for results and retry"
	msgUnknownBrowser  = "the browser disconnected before answering; the command may have been applied — read state, or retry with the same operationId"
	msgUnknownTimeout  = "no result from the browser in time; the command may have been applied — read state, or retry with the same operationId"
	msgUnknownRevoked  = "pairing was revoked before the browser answered; the command may have been applied"
	msgUnknownShutdown = "the relay stopped before the browser answered; the command may have been applied"
)

// relayHandler serves /relay connections.
type relayHandler struct{ s *Server }

// Open registers a freshly upgraded connection (its authentication
// deadline is the endpoint's, ws.PreAuth); during shutdown it refuses the
// socket with 1001.
func (h relayHandler) Open(c *ws.Conn) ws.Session {
	s := h.s
	origin, _ := hub.NormalizeOrigin(c.Header().Get("Origin"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close(closeGoingAway, "server shutting down")
		return nil
	}
	s.nextSess++
	p := &peer{conn: c, origin: origin, label: "c" + itoa(s.nextSess)}
	s.peers[p] = struct{}{}
	return &relayPeer{s: s, p: p}
}

// relayPeer is one connection's session.
type relayPeer struct {
	s *Server
	p *peer
}

// Closed detaches the peer: a close, a dead heartbeat and shutdown alike.
func (r *relayPeer) Closed(err error) {
	s, p := r.s, r.p
	// A close the relay itself decided (gws reports it as a status code,
	// e.g. 1009 for an over-limit message) is worth a line for the operator.
	// One of a socket that never logged in is thinned like its failed
	// login (refusallog.go).
	var code interface{ Uint16() uint16 }
	var o outbox
	s.mu.Lock()
	if errors.As(err, &code) && code.Uint16() != 1000 && code.Uint16() != 1001 {
		if p.authed {
			s.log.Info("connection closed by the relay", "conn", p.label, "code", code.Uint16(), "err", err)
		} else {
			s.refusedLocked("closed "+itoa(uint64(code.Uint16())), "connection closed by the relay", "conn", p.label, "code", code.Uint16(), "err", err)
		}
	}
	s.detachLocked(p, &o)
	delete(s.peers, p)
	s.mu.Unlock()
	o.flush()
}

func (r *relayPeer) Message(m *gws.Message) {
	if m.Opcode != gws.OpcodeText {
		r.s.closePeer(r.p, closePolicy, "messages must be JSON text")
		return
	}
	r.s.handle(r.p, m.Bytes())
}

// closePeer detaches p and closes it with code.
func (s *Server) closePeer(p *peer, code uint16, reason string) {
	var o outbox
	s.mu.Lock()
	s.closeLocked(p, code, reason, &o)
	s.mu.Unlock()
	o.flush()
}

// closeLocked detaches p at once (so no command is routed to a closing
// socket) and queues its close frame.
func (s *Server) closeLocked(p *peer, code uint16, reason string, o *outbox) {
	s.detachLocked(p, o)
	o.close(p, code, reason)
}

// detachLocked removes p from its session. A browser leaving fails its
// session's pending commands with OUTCOME_UNKNOWN and starts the session's
// expiry clock; an agent leaving drops its own pending entries (never
// rerouted). Idempotent.
func (s *Server) detachLocked(p *peer, o *outbox) {
	if p.gone {
		return
	}
	p.gone = true
	if !p.authed || p.sess == nil {
		return
	}
	sess := p.sess
	switch p.role {
	case "browser":
		if sess.browser != p {
			return
		}
		sess.browser = nil
		for id, pe := range sess.pending {
			pe.timer.Stop()
			delete(sess.pending, id)
			o.fail(pe, "OUTCOME_UNKNOWN", msgUnknownBrowser)
		}
		s.log.Info("browser disconnected", "session", sess.label, "conn", p.label)
		s.armExpiryLocked(sess)
	case "agent":
		delete(sess.agents, p)
		for id, pe := range sess.pending {
			if pe.agent == p {
				pe.timer.Stop()
				delete(sess.pending, id)
			}
		}
		s.log.Info("agent disconnected", "session", sess.label, "conn", p.label)
	}
}

// handle processes one text frame from p.
func (s *Server) handle(p *peer, data []byte) {
	m, err := parseMessage(data)
	var o outbox
	hello := false
	s.mu.Lock()
	switch {
	case p.gone:
	case err != nil && !p.authed:
		s.refusedLocked("malformed JSON", "closing connection after malformed JSON", "conn", p.label)
		s.closeLocked(p, closePolicy, "malformed JSON", &o)
	case err != nil:
		s.log.Info("closing connection after malformed JSON", "conn", p.label)
		s.closeLocked(p, closePolicy, "malformed JSON", &o)
	case !p.authed:
		s.helloLocked(p, m, &o)
		hello = p.authed
	case m.Type == "hello":
		s.closeLocked(p, closePolicy, "already authenticated; roles cannot change", &o)
	case p.role == "browser":
		s.browserMessageLocked(p, m, &o)
	default:
		s.agentMessageLocked(p, m, &o)
	}
	s.mu.Unlock()
	o.flush()
	if hello {
		s.release(p)
	}
}

// release writes, once p's ready is written, the frames others queued for
// it meanwhile, in order, and then lets frames go to p directly. Frames
// queued while held ones are written are held too, so a command routed the
// moment a browser said hello is delivered, after its ready, never refused.
func (s *Server) release(p *peer) {
	for {
		s.mu.Lock()
		held := p.held
		p.held = nil
		if len(held) == 0 {
			p.told = true
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		for _, b := range held {
			_ = p.conn.WriteText(b)
		}
	}
}

// helloLocked authenticates p from its first frame.
func (s *Server) helloLocked(p *peer, m *message, o *outbox) {
	if m.Type != "hello" || m.Problem != "" {
		s.refusedLocked("not hello", "closing connection: first message is not a valid hello", "conn", p.label)
		s.closeLocked(p, closePolicy, "expected hello", o)
		return
	}
	sess := s.sessions[m.SessionID]
	switch m.Role {
	case "browser":
		if sess == nil || !hub.SecretEqual(m.Token, sess.browserToken) || p.origin == "" || p.origin != sess.origin {
			s.refusedLocked("browser auth", "browser authentication failed", "conn", p.label)
			s.closeLocked(p, closePolicy, "invalid credentials", o)
			return
		}
		if sess.browser != nil {
			s.log.Info("refusing a second browser for a session", "session", sess.label, "conn", p.label)
			o.send(p, newNotice("BROWSER_ALREADY_CONNECTED", "another tab is connected to this session"))
			s.closeLocked(p, closeTryLater, "browser already connected", o)
			return
		}
		sess.browser = p
		if sess.expiry != nil {
			sess.expiry.Stop()
			sess.expiry = nil
		}
		s.env.Activity.PageAttached()
	case "agent":
		if sess == nil || sess.agentToken == "" || !hub.SecretEqual(m.Token, sess.agentToken) {
			s.refusedLocked("agent auth", "agent authentication failed", "conn", p.label)
			s.closeLocked(p, closePolicy, "invalid credentials", o)
			return
		}
		sess.agents[p] = struct{}{}
		s.env.Activity.AgentActivity()
	default:
		s.closeLocked(p, closePolicy, "invalid credentials", o)
		return
	}
	p.conn.Authenticated()
	p.authed, p.role, p.sess = true, m.Role, sess
	s.touchLocked()
	s.log.Info("authenticated", "role", m.Role, "session", sess.label, "conn", p.label)
	ready, _ := json.Marshal(struct {
		Type   string `json:"type"`
		Role   string `json:"role"`
		Paired bool   `json:"paired"`
	}{"ready", m.Role, sess.agentToken != ""})
	o.write(p, ready)
}

// armExpiryLocked starts the one-hour clock of a session with no browser.
func (s *Server) armExpiryLocked(sess *session) {
	if s.closed || s.sessions[sess.id] != sess {
		return
	}
	if sess.expiry != nil {
		sess.expiry.Stop()
	}
	sess.expiryGen++
	gen := sess.expiryGen
	sess.expiry = s.env.Guard.AfterFunc("session expiry", s.SessionTTL, func() { s.expire(sess, gen) })
}

// expire forgets a session whose browser stayed away for SessionTTL and
// closes its agents: their credentials die with it. gen identifies the
// timer that fired.
func (s *Server) expire(sess *session, gen uint64) {
	var o outbox
	s.mu.Lock()
	// Only the current period's timer counts: one that fired while the
	// browser came back (and perhaps left again) is stale.
	if s.sessions[sess.id] == sess && sess.browser == nil && sess.expiry != nil && sess.expiryGen == gen {
		delete(s.sessions, sess.id)
		sess.expiry = nil
		for a := range sess.agents {
			s.closeLocked(a, closePolicy, "session expired", &o)
		}
		sess.stopTimers()
		s.log.Info("session expired", "session", sess.label)
	}
	s.mu.Unlock()
	o.flush()
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
