package stitchslop

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// pageConn is one page socket, authenticated or not: the session of a
// ws.Conn, which owns the write discipline, the heartbeat and tracking.
// It holds the commands in flight on this socket, each under its own id:
// a reply is matched within its socket, and a socket that goes fails its
// own calls and no other's.
type pageConn struct {
	r       *run
	ws      *ws.Conn
	out     textWriter // ws; a test's page in the tests
	origin  string     // the site its browser named, admitted at the upgrade
	authed  bool       // read-loop goroutine only
	refused bool       // read-loop goroutine only

	mu      sync.Mutex
	ended   bool // detached or closed: no call may start on it
	nextID  int64
	pending map[int64]*pendingCall
}

func newPageConn(r *run, c *ws.Conn, origin string) *pageConn {
	return &pageConn{r: r, ws: c, out: c, origin: origin, pending: map[int64]*pendingCall{}}
}

// textWriter sends one text frame.
type textWriter interface{ WriteText([]byte) error }

// write sends one text frame.
func (p *pageConn) write(b []byte) error { return p.out.WriteText(b) }

// close sends a close frame and drops the socket; Closed does the rest.
func (p *pageConn) close(code uint16, reason string) { p.ws.Close(code, reason) }

// register makes a pending call on p under a fresh id; false once p ended.
func (p *pageConn) register() (int64, *pendingCall, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return 0, nil, false
	}
	p.nextID++
	pc := newPendingCall()
	p.pending[p.nextID] = pc
	return p.nextID, pc, true
}

// forget drops a pending call that will not be answered here.
func (p *pageConn) forget(id int64) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
}

// take removes and returns the call waiting for id, nil if none.
func (p *pageConn) take(id int64) *pendingCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	pc := p.pending[id]
	delete(p.pending, id)
	return pc
}

// end closes p to new calls and fails those pending; it returns how many.
func (p *pageConn) end() int {
	p.mu.Lock()
	p.ended = true
	failed := p.pending
	p.pending = map[int64]*pendingCall{}
	p.mu.Unlock()
	for _, pc := range failed {
		pc.fail(errPageGone)
	}
	return len(failed)
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(strings.TrimSpace(r.Header.Get("Upgrade")), "websocket")
}

// serveUpgrade runs the Host and Origin checks before anything is hijacked,
// so refusals are real 403s (§2.2), then hands the socket to the endpoint.
func (rn *run) serveUpgrade(w http.ResponseWriter, r *http.Request) {
	rn.refusals.attempt()
	if !hub.HostAllowed(r, rn.port) {
		rn.refusals.refuse(rn.log, ReasonHost, r.Host, "refused page upgrade: Host is not this loopback bridge", "host", clip(r.Host, 120))
		hub.WriteJSON(w, http.StatusForbidden, map[string]any{"error": "forbidden_host", "message": "Host must be 127.0.0.1 or localhost with this port"})
		return
	}
	if !rn.admits(pageOrigin(r)) {
		got := "(none)"
		if v := r.Header.Values("Origin"); len(v) > 0 {
			got = strings.Join(v, ", ")
		}
		rn.refusals.refuse(rn.log, ReasonOrigin, got, "refused page upgrade: origin mismatch", "origin", clip(got, 120), "allowed", rn.s.origin)
		hub.WriteJSON(w, http.StatusForbidden, map[string]any{"error": "forbidden_origin",
			"message": "this bridge accepts " + rn.s.origin + " and the Stitch Slop production and loopback sites this machine is paired with"})
		return
	}
	rn.pages.Serve(w, r)
}

// pageEndpoint is the page WebSocket. Until the handshake is accepted the
// shared pre-authentication guard holds: the handshake frame may be at most
// 4 KiB (refused before anything is allocated), it must come within
// AuthTimeout, and at most ws.DefaultMaxUnauthenticated sockets may be
// waiting for theirs. Then the large post-auth frame limit applies.
func (r *run) pageEndpoint(sockets *ws.Sockets, env *adapters.Env) *ws.Endpoint {
	return sockets.Endpoint(pageHandler{r}, ws.Options{
		MaxPayload: r.s.cfg.MaxFrame,
		PreAuth: ws.PreAuth{
			Limit:      MaxFirstFrame,
			Timeout:    r.s.cfg.AuthTimeout,
			OnTooLarge: r.firstFrameTooLarge,
			OnTimeout:  r.authTimedOut,
			OnCrowded:  r.crowded,
		},
		Heartbeat: env.Heartbeat,
		Log:       env.Log,
	})
}

func (r *run) firstFrameTooLarge(c *ws.Conn) {
	r.refusals.refuse(r.log, ReasonBadFrame, "first message too large (4 KiB)", "refused page handshake", "reason", ReasonBadFrame, "why", "first frame larger than 4 KiB")
	b, _ := json.Marshal(map[string]any{"error": "bad_credential", "message": "the first frame must be at most 4 KiB of JSON carrying token and/or secret"})
	c.WriteFrame(gws.OpcodeText, b, time.Second)
}

// authTimedOut tells a page that sent no handshake within AuthTimeout why
// it is closed (1008 follows).
func (r *run) authTimedOut(c *ws.Conn) {
	r.refusals.refuse(r.log, ReasonAuthTimeout, "", "page did not authenticate in time; closing", "timeout", r.s.cfg.AuthTimeout)
	b, _ := json.Marshal(map[string]any{"error": "auth_timeout", "message": "no handshake within " + r.s.cfg.AuthTimeout.String()})
	c.WriteFrame(gws.OpcodeText, b, time.Second)
}

// crowded refuses an upgrade while too many sockets wait to authenticate.
func (r *run) crowded(w http.ResponseWriter, _ *http.Request) {
	r.refusals.refuse(r.log, ReasonCrowded, "", "refused page upgrade: too many sockets waiting to authenticate")
	hub.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "crowded", "message": "too many connections are waiting to authenticate; retry shortly"})
}

type pageHandler struct{ r *run }

// Open makes a page socket's session; its authentication deadline is the
// endpoint's (PreAuth).
func (h pageHandler) Open(c *ws.Conn) ws.Session {
	h.r.log.Debug("page socket upgraded", "remote", c.RemoteAddr())
	origin, _ := hub.NormalizeOrigin(c.Header().Get("Origin")) // admitted by serveUpgrade
	return newPageConn(h.r, c, origin)
}

// Closed ends a page: a close and a dead heartbeat end here alike.
func (p *pageConn) Closed(error) {
	p.r.detach(p, "page closed")
}

// Message handles one frame: the handshake first, then replies and tool
// lists.
func (p *pageConn) Message(m *gws.Message) {
	r := p.r
	if p.refused {
		return // closing: later frames are not another handshake
	}
	if !p.authed {
		r.handshake(p, m.Opcode, m.Bytes())
		return
	}
	if m.Opcode != gws.OpcodeText {
		r.log.Warn("ignoring a binary frame from the page", "bytes", m.Data.Len())
		return
	}
	r.pageFrame(p, m.Bytes())
}

// writeError sends {"error":code,"message":msg[,"busy":true]}.
func (p *pageConn) writeError(code, msg string, busy bool) {
	v := map[string]any{"error": code, "message": msg}
	if busy {
		v["busy"] = true
	}
	b, _ := json.Marshal(v)
	p.ws.WriteFrame(gws.OpcodeText, b, time.Second)
}

// handshakeFrame is the page's first frame (§2.3).
type handshakeFrame struct {
	Token  string
	Secret string
}

var errBadHandshake = errors.New("bad handshake")

// parseHandshake decodes the first frame: a JSON object whose token and
// secret, when present, are strings; at least one must be non-empty.
func parseHandshake(b []byte) (handshakeFrame, error) {
	var hf handshakeFrame
	if len(b) > MaxFirstFrame {
		return hf, errors.New("first frame larger than 4 KiB")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return hf, errors.New("first frame is not a JSON object")
	}
	for key, dst := range map[string]*string{"token": &hf.Token, "secret": &hf.Secret} {
		raw, ok := m[key]
		if !ok || string(raw) == "null" {
			continue
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return hf, errors.New(key + " must be a string")
		}
		if len(*dst) > 1024 {
			return hf, errors.New(key + " is too long")
		}
	}
	if hf.Token == "" && hf.Secret == "" {
		return hf, errors.New("first frame carries neither token nor secret")
	}
	return hf, nil
}

// refuse logs a refused handshake, tells the page why and closes.
func (r *run) refuse(p *pageConn, reason, detail, code, msg string) {
	p.refused = true
	r.refusals.refuse(r.log, reason, detail, "refused page handshake", "reason", reason)
	p.writeError(code, msg, code == "busy")
	if code == "busy" {
		p.close(1013, "busy")
		return
	}
	p.close(1008, code)
}

// handshake authenticates the first frame (§2.3), applies the two-tab rule
// (§2.6), mints a pairing on a token handshake (§2.4) and attaches the page.
func (r *run) handshake(p *pageConn, op gws.Opcode, data []byte) {
	if op != gws.OpcodeText {
		r.refuse(p, ReasonBadFrame, "binary first frame", "bad_credential", "the first frame must be a JSON text frame carrying token and/or secret")
		return
	}
	hf, err := parseHandshake(data)
	if err != nil {
		reason := ReasonBadFrame
		if strings.Contains(err.Error(), "neither") {
			reason = ReasonNoCred
		}
		r.refuse(p, reason, err.Error(), "bad_credential", err.Error())
		return
	}

	r.authMu.Lock()
	defer r.authMu.Unlock()
	// Every credential is checked against the page's own site: a page of
	// one site never attaches with another's secret or token.
	s, store, site := r.s, r.pairings, p.origin
	armed := s.armedFor(site)

	secretOK := site != "" && hf.Secret != "" && store.Verify(site, hf.Secret)
	tokenOK, tokenSpent := false, false
	if hf.Token != "" {
		switch {
		case store.Spent(hf.Token):
			tokenSpent = true
		case armed != "" && hub.SecretEqual(hf.Token, armed):
			tokenOK = true
		}
	}
	if !secretOK && !tokenOK {
		switch {
		case tokenSpent:
			r.refuse(p, ReasonSpentToken, "", "bad_credential", "This token was already redeemed; tokens are one-time. Reopen the panel for a fresh one.")
		case hf.Secret != "":
			r.refuse(p, ReasonWrongPair, "", "bad_credential", "The stored pairing does not match this bridge. Reopen the panel for a fresh token.")
		default:
			r.refuse(p, ReasonUnknownTok, "", "bad_credential", "This token is not the one this bridge was started with.")
		}
		return
	}

	if inc := r.currentPage(); inc != nil && inc != p {
		if inc.ws.Reachable(s.cfg.ProbeTimeout) {
			r.refuse(p, ReasonBusy, "", "busy", "This connector is already serving another Stitch Slop tab. Close the other tab, or start another bridge; this tab will find a free one on its own.")
			return
		}
		r.log.Info("the attached page is unreachable; the new page takes over")
		r.displace(inc)
	}

	var pairingSecret string
	if !secretOK { // a token handshake mints a pairing and spends the token
		pairingSecret = hub.RandomToken(32)
		if err := store.Redeem(site, hf.Token, pairingSecret); err != nil {
			if errors.Is(err, errTokenSpent) {
				r.refuse(p, ReasonSpentToken, "", "bad_credential", "This token was already redeemed; tokens are one-time. Reopen the panel for a fresh one.")
				return
			}
			r.log.Error("cannot store the pairing", "err", err)
			p.writeError("internal", "the bridge could not store the pairing: "+err.Error(), false)
			p.close(1011, "internal error")
			return
		}
		s.spendArmed(site, hf.Token)
		r.log.Info("paired a new page; token spent", "origin", site)
	}
	hello := map[string]any{"hello": ServerName, "protocol": ProtocolVersion, "port": r.port}
	if pairingSecret != "" {
		hello["pairingSecret"] = pairingSecret
	}
	b, _ := json.Marshal(hello)
	if err := p.write(b); err != nil {
		p.close(1011, "write failed")
		return
	}
	p.authed = true
	p.ws.Authenticated()
	with := "pairing"
	if pairingSecret != "" {
		with = "token"
	}
	r.attach(p, with)
}

// displace tells a stale incumbent it lost the connection, then drops it
// (§2.6: never swap silently).
func (r *run) displace(old *pageConn) {
	b, _ := json.Marshal(map[string]any{"displaced": true,
		"message": "Another Stitch Slop tab has taken over this connector because this tab stopped answering."})
	old.ws.WriteFrame(gws.OpcodeText, b, time.Second)
	old.close(1000, "displaced")
	r.detach(old, "displaced")
}

// pageFrame handles an authenticated frame: a reply matched by id, or a
// (possibly revised) tool list. Anything else is logged and ignored.
func (r *run) pageFrame(p *pageConn, data []byte) {
	if id, ok := replyID(data); ok {
		r.reply(p, id, data)
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		r.log.Warn("ignoring a malformed frame from the page", "bytes", len(data))
		return
	}
	if raw, ok := m["id"]; ok && string(raw) != "null" {
		var id int64
		if err := json.Unmarshal(raw, &id); err != nil {
			r.log.Warn("ignoring a reply with a non-integer id", "id", clip(string(raw), 40))
			return
		}
		r.reply(p, id, data)
		return
	}
	if raw, ok := m["tools"]; ok {
		tools, dropped := sanitizeTools(raw)
		for _, d := range dropped {
			r.log.Warn("dropped a page tool", "name", d.Name, "reason", d.Reason)
		}
		if !r.setTools(p, tools, dropped) {
			return
		}
		r.log.Info("page tool list received", "tools", len(tools), "dropped", len(dropped))
		r.s.fire()
		return
	}
	r.log.Debug("ignoring a page frame with neither id nor tools")
}

// reply hands the page's reply to the call waiting for id: a copy of data
// (the socket reuses its buffer) with room for the newline the control
// plane ends it with.
func (r *run) reply(p *pageConn, id int64, data []byte) {
	pc := p.take(id)
	if pc == nil {
		r.log.Warn("ignoring a reply with an unknown id", "id", id)
		return
	}
	pc.reply(append(make([]byte, 0, len(data)+1), data...))
}
