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
type pageConn struct {
	s       *Server
	ws      *ws.Conn
	authed  bool          // read-loop goroutine only
	refused bool          // read-loop goroutine only
	gone    chan struct{} // closed when the page detaches or closes

	goneOnce sync.Once
}

// write sends one text frame.
func (p *pageConn) write(b []byte) error { return p.ws.WriteText(b) }

// close sends a close frame and drops the socket; Closed does the rest.
func (p *pageConn) close(code uint16, reason string) { p.ws.Close(code, reason) }

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(strings.TrimSpace(r.Header.Get("Upgrade")), "websocket")
}

// serveUpgrade runs the Host and Origin checks before anything is hijacked,
// so refusals are real 403s (§2.2), then hands the socket to the endpoint.
func (s *Server) serveUpgrade(w http.ResponseWriter, r *http.Request) {
	s.refusals.attempt()
	s.mu.Lock()
	port, log, ep := s.port, s.log, s.pages
	s.mu.Unlock()
	if !hub.HostAllowed(r, port) {
		s.refusals.refuse(log, ReasonHost, r.Host, "refused page upgrade: Host is not this loopback bridge", "host", clip(r.Host, 120))
		hub.WriteJSON(w, http.StatusForbidden, map[string]any{"error": "forbidden_host", "message": "Host must be 127.0.0.1 or localhost with this port"})
		return
	}
	if !s.policy.AllowedRequest(r) {
		got := "(none)"
		if v := r.Header.Values("Origin"); len(v) > 0 {
			got = strings.Join(v, ", ")
		}
		s.refusals.refuse(log, ReasonOrigin, got, "refused page upgrade: origin mismatch", "origin", clip(got, 120), "allowed", s.origin)
		hub.WriteJSON(w, http.StatusForbidden, map[string]any{"error": "forbidden_origin", "message": "this bridge only accepts " + s.origin})
		return
	}
	ep.Serve(w, r)
}

// pageEndpoint is the page WebSocket. Until the handshake is accepted the
// shared pre-authentication guard holds: the handshake frame may be at most
// 4 KiB (refused before anything is allocated), it must come within
// AuthTimeout, and at most ws.DefaultMaxUnauthenticated sockets may be
// waiting for theirs. Then the large post-auth frame limit applies.
func (s *Server) pageEndpoint(sockets *ws.Sockets, env *adapters.Env) *ws.Endpoint {
	return sockets.Endpoint(pageHandler{s}, ws.Options{
		MaxPayload: s.opts.MaxFrame,
		PreAuth: ws.PreAuth{
			Limit:      MaxFirstFrame,
			Timeout:    s.opts.AuthTimeout,
			OnTooLarge: s.firstFrameTooLarge,
			OnTimeout:  s.authTimedOut,
			OnCrowded:  s.crowded,
		},
		Heartbeat: env.Heartbeat,
		Log:       env.Log,
	})
}

func (s *Server) firstFrameTooLarge(c *ws.Conn) {
	s.refusals.refuse(s.log, ReasonBadFrame, "first message too large (4 KiB)", "refused page handshake", "reason", ReasonBadFrame, "why", "first frame larger than 4 KiB")
	b, _ := json.Marshal(map[string]any{"error": "bad_credential", "message": "the first frame must be at most 4 KiB of JSON carrying token and/or secret"})
	c.WriteFrame(gws.OpcodeText, b, time.Second)
}

// authTimedOut tells a page that sent no handshake within AuthTimeout why
// it is closed (1008 follows).
func (s *Server) authTimedOut(c *ws.Conn) {
	s.refusals.refuse(s.log, ReasonAuthTimeout, "", "page did not authenticate in time; closing", "timeout", s.opts.AuthTimeout)
	b, _ := json.Marshal(map[string]any{"error": "auth_timeout", "message": "no handshake within " + s.opts.AuthTimeout.String()})
	c.WriteFrame(gws.OpcodeText, b, time.Second)
}

// crowded refuses an upgrade while too many sockets wait to authenticate.
func (s *Server) crowded(w http.ResponseWriter, _ *http.Request) {
	s.refusals.refuse(s.log, ReasonCrowded, "", "refused page upgrade: too many sockets waiting to authenticate")
	hub.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "crowded", "message": "too many connections are waiting to authenticate; retry shortly"})
}

type pageHandler struct{ s *Server }

// Open makes a page socket's session; its authentication deadline is the
// endpoint's (PreAuth).
func (h pageHandler) Open(c *ws.Conn) ws.Session {
	s := h.s
	p := &pageConn{s: s, ws: c, gone: make(chan struct{})}
	s.log.Debug("page socket upgraded", "remote", c.RemoteAddr())
	return p
}

// Closed ends a page: a close and a dead heartbeat end here alike.
func (p *pageConn) Closed(error) {
	p.s.detach(p, "page closed")
}

// Message handles one frame: the handshake first, then replies and tool
// lists.
func (p *pageConn) Message(m *gws.Message) {
	s := p.s
	if p.refused {
		return // closing: later frames are not another handshake
	}
	if !p.authed {
		s.handshake(p, m.Opcode, m.Bytes())
		return
	}
	if m.Opcode != gws.OpcodeText {
		s.log.Warn("ignoring a binary frame from the page", "bytes", m.Data.Len())
		return
	}
	s.pageFrame(p, m.Bytes())
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
func (s *Server) refuse(p *pageConn, reason, detail, code, msg string) {
	p.refused = true
	s.refusals.refuse(s.log, reason, detail, "refused page handshake", "reason", reason)
	p.writeError(code, msg, code == "busy")
	if code == "busy" {
		p.close(1013, "busy")
		return
	}
	p.close(1008, code)
}

// handshake authenticates the first frame (§2.3), applies the two-tab rule
// (§2.6), mints a pairing on a token handshake (§2.4) and attaches the page.
func (s *Server) handshake(p *pageConn, op gws.Opcode, data []byte) {
	if op != gws.OpcodeText {
		s.refuse(p, ReasonBadFrame, "binary first frame", "bad_credential", "the first frame must be a JSON text frame carrying token and/or secret")
		return
	}
	hf, err := parseHandshake(data)
	if err != nil {
		reason := ReasonBadFrame
		if strings.Contains(err.Error(), "neither") {
			reason = ReasonNoCred
		}
		s.refuse(p, reason, err.Error(), "bad_credential", err.Error())
		return
	}

	s.authMu.Lock()
	defer s.authMu.Unlock()
	s.mu.Lock()
	store, armed, port := s.pairings, s.armed, s.port
	s.mu.Unlock()

	secretOK := hf.Secret != "" && store.Verify(s.origin, hf.Secret)
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
			s.refuse(p, ReasonSpentToken, "", "bad_credential", "This token was already redeemed; tokens are one-time. Reopen the panel for a fresh one.")
		case hf.Secret != "":
			s.refuse(p, ReasonWrongPair, "", "bad_credential", "The stored pairing does not match this bridge. Reopen the panel for a fresh token.")
		default:
			s.refuse(p, ReasonUnknownTok, "", "bad_credential", "This token is not the one this bridge was started with.")
		}
		return
	}

	if inc := s.currentPage(); inc != nil && inc != p {
		if inc.ws.Reachable(s.opts.ProbeTimeout) {
			s.refuse(p, ReasonBusy, "", "busy", "This connector is already serving another Stitch Slop tab. Close the other tab, or start another bridge; this tab will find a free one on its own.")
			return
		}
		s.log.Info("the attached page is unreachable; the new page takes over")
		s.displace(inc)
	}

	var pairingSecret string
	if !secretOK { // a token handshake mints a pairing and spends the token
		pairingSecret = hub.RandomToken(32)
		if err := store.Redeem(s.origin, hf.Token, pairingSecret); err != nil {
			if errors.Is(err, errTokenSpent) {
				s.refuse(p, ReasonSpentToken, "", "bad_credential", "This token was already redeemed; tokens are one-time. Reopen the panel for a fresh one.")
				return
			}
			s.log.Error("cannot store the pairing", "err", err)
			p.writeError("internal", "the bridge could not store the pairing: "+err.Error(), false)
			p.close(1011, "internal error")
			return
		}
		s.mu.Lock()
		if s.armed != "" && hub.SecretEqual(s.armed, hf.Token) {
			s.armed = ""
		}
		s.mu.Unlock()
		s.log.Info("paired a new page; token spent", "origin", s.origin)
	}
	hello := map[string]any{"hello": ServerName, "protocol": ProtocolVersion, "port": port}
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
	s.attach(p)
}

// currentPage is the attached page, if any.
func (s *Server) currentPage() *pageConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.page
}

// attach makes p the page: waiters woken, MCP notified.
func (s *Server) attach(p *pageConn) {
	s.mu.Lock()
	env := s.env
	s.page = p
	s.tools, s.dropped = nil, nil
	close(s.attachedCh)
	s.lastActivity = time.Now()
	s.mu.Unlock()
	if env != nil {
		env.Activity.PageAttached()
	}
	s.log.Info("page attached", "origin", s.origin)
	s.notifyToolsChanged()
}

// detach forgets p if it is the page: tools dropped, pending calls failed,
// MCP notified. It is idempotent.
func (s *Server) detach(p *pageConn, why string) {
	p.goneOnce.Do(func() { close(p.gone) })
	s.mu.Lock()
	if s.page != p {
		s.mu.Unlock()
		return
	}
	s.page = nil
	s.tools, s.dropped = nil, nil
	s.attachedCh = make(chan struct{})
	var failed []*pendingCall
	for id, pc := range s.pending {
		if pc.page == p {
			failed = append(failed, pc)
			delete(s.pending, id)
		}
	}
	s.mu.Unlock()
	for _, pc := range failed {
		pc.fail(errPageGone)
	}
	s.log.Info("page detached", "why", why, "failedCalls", len(failed))
	s.notifyToolsChanged()
}

// displace tells a stale incumbent it lost the connection, then drops it
// (§2.6: never swap silently).
func (s *Server) displace(old *pageConn) {
	b, _ := json.Marshal(map[string]any{"displaced": true,
		"message": "Another Stitch Slop tab has taken over this connector because this tab stopped answering."})
	old.ws.WriteFrame(gws.OpcodeText, b, time.Second)
	old.close(1000, "displaced")
	s.detach(old, "displaced")
}

// pageFrame handles an authenticated frame: a reply matched by id, or a
// (possibly revised) tool list. Anything else is logged and ignored.
func (s *Server) pageFrame(p *pageConn, data []byte) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		s.log.Warn("ignoring a malformed frame from the page", "bytes", len(data))
		return
	}
	if raw, ok := m["id"]; ok && string(raw) != "null" {
		var id int64
		if err := json.Unmarshal(raw, &id); err != nil {
			s.log.Warn("ignoring a reply with a non-integer id", "id", clip(string(raw), 40))
			return
		}
		s.mu.Lock()
		pc := s.pending[id]
		if pc != nil && pc.page == p {
			delete(s.pending, id)
		} else {
			pc = nil
		}
		s.mu.Unlock()
		if pc == nil {
			s.log.Warn("ignoring a reply with an unknown id", "id", id)
			return
		}
		pc.reply(append([]byte(nil), data...))
		return
	}
	if raw, ok := m["tools"]; ok {
		tools, dropped := sanitizeTools(raw)
		for _, d := range dropped {
			s.log.Warn("dropped a page tool", "name", d.Name, "reason", d.Reason)
		}
		s.mu.Lock()
		if s.page != p {
			s.mu.Unlock()
			return
		}
		s.tools, s.dropped = tools, dropped
		s.mu.Unlock()
		s.log.Info("page tool list received", "tools", len(tools), "dropped", len(dropped))
		s.notifyToolsChanged()
		return
	}
	s.log.Debug("ignoring a page frame with neither id nor tools")
}
