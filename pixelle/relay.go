package pixelle

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// WebSocket close codes the relay uses.
const (
	closePolicy    = 1008 // invalid credentials, malformed JSON, auth timeout, revoked
	closeTryLater  = 1013 // a second browser for a session that already has one
	closeGoingAway = 1001
)

// outbox collects frames and closes decided under relay.mu and performs
// them after the lock is released, so a slow peer never stalls the relay.
// A frame's turn (one command or one result) queues a single action, so the
// first is held in the outbox itself: queueing it allocates nothing.
type outbox struct {
	first outItem
	rest  []outItem
	n     int
}

// outItem is one queued action: a text frame for sock, a close of sock, or
// an answer for an in-process caller (local).
type outItem struct {
	sock   *ws.Conn
	frame  []byte
	close  bool
	code   uint16
	reason string
	local  chan relayAnswer
	answer relayAnswer
}

func (o *outbox) add(it outItem) {
	if o.n == 0 {
		o.first = it
	} else {
		o.rest = append(o.rest, it)
	}
	o.n++
}

func (o *outbox) send(c *conn, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	o.sendRaw(c, b)
}

// sendRaw queues b for c. Called under relay.mu. A frame for a connection
// whose ready is still being written is held and written after it (see
// conn.release), so nothing overtakes a ready.
func (o *outbox) sendRaw(c *conn, b []byte) {
	if c.authed && !c.told {
		c.held = append(c.held, b)
		return
	}
	o.write(c, b)
}

// write queues b for c unconditionally: the ready itself.
func (o *outbox) write(c *conn, b []byte) {
	o.add(outItem{sock: c.sock, frame: b})
}

func (o *outbox) close(c *conn, code uint16, reason string) {
	o.add(outItem{sock: c.sock, close: true, code: code, reason: reason})
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

// flush performs the queued actions in order.
func (o *outbox) flush() {
	if o.n == 0 {
		return
	}
	o.first.do()
	for i := range o.rest {
		o.rest[i].do()
	}
}

func (it *outItem) do() {
	switch {
	case it.local != nil:
		it.local <- it.answer
	case it.close:
		it.sock.Close(it.code, it.reason)
	default:
		_ = it.sock.WriteText(it.frame)
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

// relay is one run of a Server: what Serve builds once it holds the port
// and drops when it returns. Every session, connection and credential
// lives here and nowhere else. Fields after mu are guarded by it, as are
// the sessions' and connections' own.
type relay struct {
	s        *Server // the configuration: read, never written, while serving
	env      *adapters.Env
	log      *slog.Logger
	port     int
	url      string          // RELAY for port
	endpoint *ws.Endpoint    // /relay
	refusals *hub.LogThinner // this run's failed logins and refused codes (refusallog.go)

	mu       sync.Mutex
	closed   bool                // set at shutdown: no new timers, sessions or connections
	sessions map[string]*session // by session id
	conns    map[*conn]struct{}  // every upgraded connection
	rate     *rateLimiter
	nextReq  uint64
	nextName uint64 // numbers the "s<N>" and "c<N>" labels of logs
	lastAct  time.Time
	// The in-process agent's pairing (bridge.go): the session its pair
	// tool paired with and the agent token that pairing issued.
	bridgeSession, bridgeToken string
}

// newRelay is the state of one run on port, with its /relay endpoint
// among sockets.
func newRelay(s *Server, env *adapters.Env, port int, sockets *ws.Sockets) *relay {
	rl := &relay{
		s: s, env: env, log: env.Log, port: port, url: relayURL(port),
		refusals: newRefusalLog(),
		sessions: map[string]*session{},
		conns:    map[*conn]struct{}{},
		rate:     newRateLimiter(s.RateLimit, s.RateWindow, s.MaxRatePeers),
	}
	// Until its hello is accepted a socket is under the shared
	// pre-authentication guard: a small hello-sized message limit instead
	// of MaxMessage, the contract's authentication deadline (close 1008),
	// and a cap on such sockets (HTTP 503 beyond it).
	rl.endpoint = sockets.Endpoint(rl, ws.Options{
		MaxPayload: s.MaxMessage, Heartbeat: env.Heartbeat, Log: env.Log,
		PreAuth: ws.PreAuth{Timeout: s.AuthTimeout, OnCrowded: func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, http.StatusServiceUnavailable, "TOO_MANY_CONNECTIONS", "too many connections are waiting to authenticate; retry shortly")
		}},
	})
	return rl
}

// Open (ws.Handler) registers a freshly upgraded /relay connection (its
// authentication deadline is the endpoint's, ws.PreAuth); during shutdown
// it refuses the socket with 1001.
func (rl *relay) Open(sock *ws.Conn) ws.Session {
	origin, _ := hub.NormalizeOrigin(sock.Header().Get("Origin"))
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.closed {
		sock.Close(closeGoingAway, "server shutting down")
		return nil
	}
	rl.nextName++
	c := &conn{rl: rl, sock: sock, origin: origin, label: "c" + itoa(rl.nextName)}
	rl.conns[c] = struct{}{}
	return c
}

// failPending answers every command in flight with OUTCOME_UNKNOWN (the
// relay is stopping).
func (rl *relay) failPending() {
	var o outbox
	rl.mu.Lock()
	for _, sess := range rl.sessions {
		for id, pe := range sess.pending {
			pe.timer.Stop()
			delete(sess.pending, id)
			o.fail(pe, "OUTCOME_UNKNOWN", msgUnknownShutdown)
		}
	}
	rl.mu.Unlock()
	o.flush()
}

// shutdown clears every timer and forgets every session.
// The summaries of failed logins still due are written now, not lost
// with the process.
func (rl *relay) shutdown() {
	rl.mu.Lock()
	rl.closed = true
	for _, sess := range rl.sessions {
		sess.stopTimers()
	}
	rl.sessions = map[string]*session{}
	rl.conns = map[*conn]struct{}{}
	rl.mu.Unlock()
	rl.refusals.Flush()
}

// status is Server.Status while this run serves.
func (rl *relay) status() adapters.Status {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	st := adapters.Status{LastActivity: rl.lastAct}
	if rl.closed {
		return st
	}
	st.Ports = []int{rl.port}
	for _, sess := range rl.sessions {
		if sess.browser != nil {
			st.PageAttached = true
		}
		st.AgentSessions += len(sess.agents)
	}
	if !st.PageAttached {
		st.Note = "waiting for the Pixelle page: click Connect locally with relay " + rl.url
	}
	return st
}

// touchLocked records activity for Status.
func (rl *relay) touchLocked() { rl.lastAct = time.Now() }

// armExpiryLocked starts the one-hour clock of a session with no browser.
func (rl *relay) armExpiryLocked(sess *session) {
	if rl.closed || rl.sessions[sess.id] != sess {
		return
	}
	if sess.expiry != nil {
		sess.expiry.Stop()
	}
	sess.expiryGen++
	gen := sess.expiryGen
	sess.expiry = rl.env.Guard.AfterFunc("session expiry", rl.s.SessionTTL, func() { rl.expire(sess, gen) })
}

// expire forgets a session whose browser stayed away for SessionTTL and
// closes its agents: their credentials die with it. gen identifies the
// timer that fired.
func (rl *relay) expire(sess *session, gen uint64) {
	var o outbox
	rl.mu.Lock()
	// Only the current period's timer counts: one that fired while the
	// browser came back (and perhaps left again) is stale.
	if rl.sessions[sess.id] == sess && sess.browser == nil && sess.expiry != nil && sess.expiryGen == gen {
		delete(rl.sessions, sess.id)
		sess.expiry = nil
		for a := range sess.agents {
			a.closeLocked(closePolicy, "session expired", &o)
		}
		sess.stopTimers()
		rl.log.Info("session expired", "session", sess.label)
	}
	rl.mu.Unlock()
	o.flush()
}

// errClosed reports a relay that is shutting down.
var errClosed = errors.New("relay is shutting down")

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
