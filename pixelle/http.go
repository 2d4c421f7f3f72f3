package pixelle

import (
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/hubdev/hub/hub"
)

// httpHandler serves one run's /health, /api/sessions, /api/pair and the
// /relay upgrade. Every request passes the Host and Origin checks first.
type httpHandler struct{ rl *relay }

// errorBody is the relay's HTTP error shape: {"error":"CODE"}, plus a
// human message where it helps.
type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message,omitempty"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	hub.WriteJSON(w, status, errorBody{Error: code, Message: msg})
}

// hostAllowed is stricter than hub.HostAllowed: the relay listens on
// 127.0.0.1 only and RELAY is always written with that host, so the Host
// header must be exactly 127.0.0.1:<bound port> — "localhost" names a
// different origin the browser UI never uses. On port 80 the port may be
// left out: browsers drop a scheme's default port from the URL, and so
// from Host.
func hostAllowed(r *http.Request, port int) bool {
	return r.Host == hub.LoopbackHost+":"+strconv.Itoa(port) || (port == 80 && r.Host == hub.LoopbackHost)
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s, port := h.rl.s, h.rl.port
	w.Header().Add("Vary", "Origin")
	if !hostAllowed(r, port) {
		writeError(w, http.StatusForbidden, "HOST_NOT_ALLOWED", "Host must be "+hub.LoopbackHost+":"+strconv.Itoa(port))
		return
	}
	origins := r.Header.Values("Origin")
	browser := false
	if len(origins) > 0 {
		if !s.policy.AllowedRequest(r) {
			writeError(w, http.StatusForbidden, "ORIGIN_NOT_ALLOWED", "")
			return
		}
		browser = true
		w.Header().Set("Access-Control-Allow-Origin", s.website)
	}
	if r.Method == http.MethodOptions { // every path: "handle allowed-origin OPTIONS with 204"
		if !browser {
			writeError(w, http.StatusForbidden, "ORIGIN_NOT_ALLOWED", "preflight requires the allowed Origin")
			return
		}
		hd := w.Header()
		hd.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		hd.Set("Access-Control-Allow-Headers", "Content-Type")
		hd.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	switch r.URL.Path {
	case "/health":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, "GET, HEAD, OPTIONS")
			return
		}
		hub.WriteJSON(w, http.StatusOK, struct {
			OK      bool   `json:"ok"`
			Version string `json:"version"`
		}{true, ProtocolVersion})
	case "/api/sessions":
		if r.Method != http.MethodPost {
			methodNotAllowed(w, "POST, OPTIONS")
			return
		}
		h.createSession(w, r, browser)
	case "/api/pair":
		if r.Method != http.MethodPost {
			methodNotAllowed(w, "POST, OPTIONS")
			return
		}
		h.pair(w, r)
	case "/relay":
		h.upgrade(w, r)
	default:
		writeError(w, http.StatusNotFound, "NOT_FOUND", "")
	}
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "")
}

// createSession is POST /api/sessions: browsers only (allowed Origin).
func (h *httpHandler) createSession(w http.ResponseWriter, r *http.Request, browser bool) {
	if !browser {
		writeError(w, http.StatusForbidden, "ORIGIN_REQUIRED", "sessions are created by the Pixelle page")
		return
	}
	// The body is empty; tolerate a small one but never read an unbounded one.
	var ignored any
	if err := hub.ReadJSONBody(r, h.rl.s.PairBodyLimit, &ignored); errors.Is(err, hub.ErrBodyTooLarge) {
		writeError(w, http.StatusRequestEntityTooLarge, "BODY_TOO_LARGE", "")
		return
	}
	id, tok, err := h.rl.newSession(h.rl.s.website)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "TOO_MANY_SESSIONS", err.Error())
		return
	}
	hub.WriteJSON(w, http.StatusCreated, struct {
		ID           string `json:"id"`
		BrowserToken string `json:"browserToken"`
	}{id, tok})
}

// pair is POST /api/pair: native agents exchange a code for an agent token.
func (h *httpHandler) pair(w http.ResponseWriter, r *http.Request) {
	rl, s := h.rl, h.rl.s
	peerKey := r.RemoteAddr
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		peerKey = host
	}
	rl.mu.Lock()
	ok := rl.rate.allow(peerKey, s.Now())
	rl.mu.Unlock()
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(s.RateWindow.Seconds()+0.999)))
		writeError(w, http.StatusTooManyRequests, "RATE_LIMITED", "too many pairing attempts; wait a minute")
		return
	}
	var body struct {
		Code *string `json:"code"`
	}
	if err := hub.ReadJSONBody(r, s.PairBodyLimit, &body); err != nil {
		if errors.Is(err, hub.ErrBodyTooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, "BODY_TOO_LARGE", "the pairing body is limited to 1 KiB")
			return
		}
		writeError(w, http.StatusBadRequest, "INVALID_REQUEST", `send {"code":"CODE"}`)
		return
	}
	if body.Code == nil {
		writeError(w, http.StatusBadRequest, "INVALID_REQUEST", `send {"code":"CODE"}`)
		return
	}
	res, err := rl.pairCode(*body.Code)
	if err != nil {
		writeError(w, http.StatusBadRequest, "INVALID_OR_EXPIRED_CODE", "")
		return
	}
	hub.WriteJSON(w, http.StatusOK, res)
}

// normalizeCode uppercases ASCII hex and rejects anything that is not 12
// hex digits. Surrounding ASCII spaces (a sloppy paste) are trimmed.
func normalizeCode(code string) (string, bool) {
	code = strings.Trim(code, " \t\r\n")
	if len(code) != 2*pairCodeBytes {
		return "", false
	}
	b := []byte(code)
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9', c >= 'A' && c <= 'F':
		case c >= 'a' && c <= 'f':
			b[i] = c - 'a' + 'A'
		default:
			return "", false
		}
	}
	return string(b), true
}

// upgrade is GET /relay. Host and Origin were checked by ServeHTTP; a
// plain GET gets 426.
func (h *httpHandler) upgrade(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, "GET")
		return
	}
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		w.Header().Set("Upgrade", "websocket")
		writeError(w, http.StatusUpgradeRequired, "UPGRADE_REQUIRED", "connect with a WebSocket")
		return
	}
	if status, msg := handshakeProblem(r); status != 0 {
		if status == http.StatusUpgradeRequired {
			w.Header().Set("Sec-WebSocket-Version", "13")
		}
		writeError(w, status, "BAD_HANDSHAKE", msg)
		return
	}
	h.rl.endpoint.Serve(w, r)
}

// handshakeProblem checks the rest of an RFC 6455 opening handshake. The
// WebSocket library would refuse a broken one with its own text/plain 400
// written on the hijacked connection, without the contract's JSON,
// Cache-Control and CORS headers; checking here keeps every /relay answer
// the relay's own.
func handshakeProblem(r *http.Request) (int, string) {
	if r.Header.Get("Sec-WebSocket-Version") != "13" {
		return http.StatusUpgradeRequired, "only WebSocket version 13 is supported"
	}
	if !headerHasToken(r.Header.Values("Connection"), "upgrade") {
		return http.StatusBadRequest, "the Connection header must include Upgrade"
	}
	key, err := base64.StdEncoding.DecodeString(r.Header.Get("Sec-WebSocket-Key"))
	if err != nil || len(key) != 16 {
		return http.StatusBadRequest, "Sec-WebSocket-Key must be 16 base64-encoded bytes"
	}
	return 0, ""
}

// headerHasToken reports whether a comma-separated header lists token
// (case-insensitively).
func headerHasToken(values []string, token string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}
