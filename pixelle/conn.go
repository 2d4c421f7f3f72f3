package pixelle

import (
	"encoding/json"
	"errors"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// conn is one upgraded /relay connection (its ws.Session): the socket and
// what its hello authenticated. Fields after label are guarded by
// relay.mu.
type conn struct {
	rl     *relay
	sock   *ws.Conn
	origin string // normalised Origin of the upgrade, "" if none
	label  string // "c<N>" for logs

	authed bool
	role   string
	sess   *session
	gone   bool // Closed ran or the relay closed it
	// told is set once an authenticated connection's ready has been
	// written. Until then frames for it are held: written after relay.mu
	// is released, they could otherwise overtake the ready.
	told bool
	held [][]byte
}

// Closed detaches the connection: a close, a dead heartbeat and shutdown
// alike.
func (c *conn) Closed(err error) {
	rl := c.rl
	// A close the relay itself decided (gws reports it as a status code,
	// e.g. 1009 for an over-limit message) is worth a line for the operator.
	// One of a socket that never logged in is thinned like its failed
	// login (refusallog.go).
	var code interface{ Uint16() uint16 }
	var o outbox
	rl.mu.Lock()
	if errors.As(err, &code) && code.Uint16() != 1000 && code.Uint16() != 1001 {
		if c.authed {
			rl.log.Info("connection closed by the relay", "conn", c.label, "code", code.Uint16(), "err", err)
		} else {
			rl.refusedLocked("closed "+itoa(uint64(code.Uint16())), "connection closed by the relay", "conn", c.label, "code", code.Uint16(), "err", err)
		}
	}
	c.detachLocked(&o)
	delete(rl.conns, c)
	rl.mu.Unlock()
	o.flush()
}

// Message handles one frame.
func (c *conn) Message(m *gws.Message) {
	if m.Opcode != gws.OpcodeText {
		c.close(closePolicy, "messages must be JSON text")
		return
	}
	c.handle(m.Bytes())
}

// close detaches c and closes it with code.
func (c *conn) close(code uint16, reason string) {
	var o outbox
	c.rl.mu.Lock()
	c.closeLocked(code, reason, &o)
	c.rl.mu.Unlock()
	o.flush()
}

// closeLocked detaches c at once (so no command is routed to a closing
// socket) and queues its close frame.
func (c *conn) closeLocked(code uint16, reason string, o *outbox) {
	c.detachLocked(o)
	o.close(c, code, reason)
}

// detachLocked removes c from its session. A browser leaving fails its
// session's pending commands with OUTCOME_UNKNOWN and starts the session's
// expiry clock; an agent leaving drops its own pending entries (never
// rerouted). Idempotent.
func (c *conn) detachLocked(o *outbox) {
	if c.gone {
		return
	}
	c.gone = true
	if !c.authed || c.sess == nil {
		return
	}
	rl, sess := c.rl, c.sess
	switch c.role {
	case "browser":
		if sess.browser != c {
			return
		}
		sess.browser = nil
		for id, pe := range sess.pending {
			pe.timer.Stop()
			delete(sess.pending, id)
			o.fail(pe, "OUTCOME_UNKNOWN", msgUnknownBrowser)
		}
		rl.log.Info("browser disconnected", "session", sess.label, "conn", c.label)
		rl.armExpiryLocked(sess)
	case "agent":
		delete(sess.agents, c)
		for id, pe := range sess.pending {
			if pe.agent == c {
				pe.timer.Stop()
				delete(sess.pending, id)
			}
		}
		rl.log.Info("agent disconnected", "session", sess.label, "conn", c.label)
	}
}

// handle processes one text frame from c.
func (c *conn) handle(data []byte) {
	rl := c.rl
	m, err := parseMessage(data)
	var o outbox
	hello := false
	rl.mu.Lock()
	switch {
	case c.gone:
	case err != nil && !c.authed:
		rl.refusedLocked("malformed JSON", "closing connection after malformed JSON", "conn", c.label)
		c.closeLocked(closePolicy, "malformed JSON", &o)
	case err != nil:
		rl.log.Info("closing connection after malformed JSON", "conn", c.label)
		c.closeLocked(closePolicy, "malformed JSON", &o)
	case !c.authed:
		c.helloLocked(m, &o)
		hello = c.authed
	case m.Type == "hello":
		c.closeLocked(closePolicy, "already authenticated; roles cannot change", &o)
	case c.role == "browser":
		c.browserMessageLocked(m, &o)
	default:
		c.agentMessageLocked(m, &o)
	}
	rl.mu.Unlock()
	o.flush()
	if hello {
		c.release()
	}
}

// release writes, once c's ready is written, the frames others queued for
// it meanwhile, in order, and then lets frames go to c directly. Frames
// queued while held ones are written are held too, so a command routed the
// moment a browser said hello is delivered, after its ready, never refused.
func (c *conn) release() {
	for {
		c.rl.mu.Lock()
		held := c.held
		c.held = nil
		if len(held) == 0 {
			c.told = true
			c.rl.mu.Unlock()
			return
		}
		c.rl.mu.Unlock()
		for _, b := range held {
			_ = c.sock.WriteText(b)
		}
	}
}

// helloLocked authenticates c from its first frame.
func (c *conn) helloLocked(m *message, o *outbox) {
	rl := c.rl
	if m.Type != "hello" || m.Problem != "" {
		rl.refusedLocked("not hello", "closing connection: first message is not a valid hello", "conn", c.label)
		c.closeLocked(closePolicy, "expected hello", o)
		return
	}
	sess := rl.sessions[m.SessionID]
	switch m.Role {
	case "browser":
		if sess == nil || !hub.SecretEqual(m.Token, sess.browserToken) || c.origin == "" || c.origin != sess.origin {
			rl.refusedLocked("browser auth", "browser authentication failed", "conn", c.label)
			c.closeLocked(closePolicy, "invalid credentials", o)
			return
		}
		if sess.browser != nil {
			rl.log.Info("refusing a second browser for a session", "session", sess.label, "conn", c.label)
			o.send(c, newNotice("BROWSER_ALREADY_CONNECTED", "another tab is connected to this session"))
			c.closeLocked(closeTryLater, "browser already connected", o)
			return
		}
		sess.browser = c
		if sess.expiry != nil {
			sess.expiry.Stop()
			sess.expiry = nil
		}
		rl.env.Activity.PageAttached()
	case "agent":
		if sess == nil || sess.agentToken == "" || !hub.SecretEqual(m.Token, sess.agentToken) {
			rl.refusedLocked("agent auth", "agent authentication failed", "conn", c.label)
			c.closeLocked(closePolicy, "invalid credentials", o)
			return
		}
		sess.agents[c] = struct{}{}
		rl.env.Activity.AgentActivity()
	default:
		c.closeLocked(closePolicy, "invalid credentials", o)
		return
	}
	c.sock.Authenticated()
	c.authed, c.role, c.sess = true, m.Role, sess
	rl.touchLocked()
	rl.log.Info("authenticated", "role", m.Role, "session", sess.label, "conn", c.label)
	ready, _ := json.Marshal(struct {
		Type   string `json:"type"`
		Role   string `json:"role"`
		Paired bool   `json:"paired"`
	}{"ready", m.Role, sess.agentToken != ""})
	o.write(c, ready)
}
