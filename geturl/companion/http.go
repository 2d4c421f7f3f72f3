package companion

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/session"
	"github.com/hubdev/hub/hub"
)

// Handler is the device API under /companion/ (mount it on the control
// plane's mux at "/companion/").
func (s *Service) Handler() http.Handler { return http.HandlerFunc(s.serve) }

// Limits of the device API's fields.
const (
	maxName         = 64  // runes of a device name
	maxConversation = 512 // bytes of a conversation URL
	maxItems        = 64  // heartbeat entries
)

func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	// A web page's request is refused before anything else is looked at.
	// Chromium sends no Origin on an extension's GETs (host permissions
	// bypass CORS): those two GETs may come without one, and need the
	// device's Authorization, which a page cannot send cross-origin
	// without a preflight this server never grants.
	if !extensionOrigin(r) && !(len(r.Header.Values("Origin")) == 0 && deviceGET(r)) {
		fail(w, http.StatusForbidden, "forbidden_origin", "only the browser companion extension may call this")
		return
	}
	if r.Host != "127.0.0.1:"+strconv.Itoa(s.o.ControlPort) {
		fail(w, http.StatusForbidden, "forbidden_host", "Host must be 127.0.0.1 with the control port")
		return
	}
	path := r.URL.Path
	switch {
	case path == "/companion/pair" && r.Method == http.MethodPost:
		s.pair(w, r)
	case strings.HasPrefix(path, "/companion/pair/") && r.Method == http.MethodGet:
		s.pairState(w, r, strings.TrimPrefix(path, "/companion/pair/"))
	case path == "/companion/projects" && r.Method == http.MethodGet:
		s.projects(w, r)
	case path == "/companion/bind" && r.Method == http.MethodPost:
		s.bind(w, r)
	case path == "/companion/heartbeat" && r.Method == http.MethodPost:
		s.heartbeat(w, r)
	case path == "/companion/disconnect" && r.Method == http.MethodPost:
		s.disconnect(w, r)
	default:
		fail(w, http.StatusNotFound, "not_found", "no such companion route")
	}
}

// deviceGET: the device-authenticated GETs.
func deviceGET(r *http.Request) bool {
	return r.Method == http.MethodGet && (r.URL.Path == "/companion/projects" || strings.HasPrefix(r.URL.Path, "/companion/pair/"))
}

// extensionOrigin: exactly one Origin, an extension's.
func extensionOrigin(r *http.Request) bool {
	o := r.Header.Values("Origin")
	if len(o) != 1 {
		return false
	}
	for _, pre := range []string{"chrome-extension://", "moz-extension://"} {
		if id, ok := strings.CutPrefix(o[0], pre); ok {
			return id != "" && !strings.ContainsAny(id, "/?#@:") && len(id) <= 128
		}
	}
	return false
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	hub.WriteJSON(w, status, map[string]any{"error": code, "message": msg})
}

// readBody reads and strictly decodes a request body into v; on failure
// it has answered. It is called before the service's lock is taken: a
// slow sender holds only its own request.
func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err == nil {
		err = decode(b, v)
	}
	switch {
	case errors.Is(err, errTooLarge):
		fail(w, http.StatusRequestEntityTooLarge, "body_too_large", err.Error())
		return false
	case err != nil:
		fail(w, http.StatusBadRequest, "bad_request", err.Error())
		return false
	}
	return true
}

// credentials splits "Bearer <device-id>.<secret>".
func credentials(r *http.Request) (id, secret string, ok bool) {
	v := r.Header.Values("Authorization")
	if len(v) != 1 {
		return "", "", false
	}
	cred, ok := strings.CutPrefix(v[0], "Bearer ")
	if !ok {
		return "", "", false
	}
	return strings.Cut(cred, ".")
}

// secretHash is the SHA-256 of a well-formed secret (32 bytes, base64url
// unpadded).
func secretHash(secret string) ([sha256.Size]byte, bool) {
	raw, err := base64.RawURLEncoding.Strict().DecodeString(secret)
	if err != nil || len(raw) != 32 || len(secret) != 43 {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256([]byte(secret)), true
}

// matches compares a presented secret with a stored hash in constant time.
// A missing record is compared against zeros, so an unknown id costs what
// a wrong secret does.
func matches(stored *[sha256.Size]byte, secret string) bool {
	h := sha256.Sum256([]byte(secret))
	var zero [sha256.Size]byte
	want := &zero
	if stored != nil {
		want = stored
	}
	return subtle.ConstantTimeCompare(h[:], want[:]) == 1 && stored != nil
}

// deviceLocked authenticates r as a paired device; on failure it has
// answered 401.
func (s *Service) deviceLocked(w http.ResponseWriter, r *http.Request) *device {
	id, secret, ok := credentials(r)
	var d *device
	var stored *[sha256.Size]byte
	if ok {
		if d = s.devices[id]; d != nil {
			stored = &d.hash
		}
	}
	if !matches(stored, secret) || !ok {
		fail(w, http.StatusUnauthorized, "unauthorized", "unknown device or wrong secret; pair again")
		return nil
	}
	return d
}

// checkName: 1..maxName printable runes.
func checkName(name string) error {
	n := utf8.RuneCountInString(name)
	if n == 0 || n > maxName || !utf8.ValidString(name) || strings.TrimSpace(name) == "" {
		return fmt.Errorf("name must be 1-%d printable characters", maxName)
	}
	for _, c := range name {
		if !unicode.IsPrint(c) {
			return fmt.Errorf("name must be 1-%d printable characters", maxName)
		}
	}
	return nil
}

func (s *Service) pair(w http.ResponseWriter, r *http.Request) {
	var req pairBody
	if !readBody(w, r, &req) {
		return
	}
	if err := checkName(req.Name); err != nil {
		fail(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	hash, ok := secretHash(req.Secret)
	if !ok {
		fail(w, http.StatusBadRequest, "bad_request", "secret must be 32 random bytes, base64url without padding (43 characters)")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		fail(w, http.StatusServiceUnavailable, "companion_unavailable", "the hub cannot read its companion state; the operator must fix it")
		return
	}
	now := s.now()
	s.pruneRequestsLocked(now)
	if s.pendingCountLocked(now) >= MaxPending {
		fail(w, http.StatusTooManyRequests, "too_many_pending", "too many pairing requests wait for the operator; try again later")
		return
	}
	pr := &pairRequest{id: newID('r'), device: newID('d'), name: req.Name, code: newCode(), hash: hash,
		created: now, expires: now.Add(PairTTL), state: statePending}
	for s.requests[pr.id] != nil || s.devices[pr.device] != nil {
		pr.id, pr.device = newID('r'), newID('d')
	}
	s.requests[pr.id] = pr
	s.pruneRequestsLocked(now)
	s.o.Log.Info("companion pairing requested", "request", pr.id, "name", pr.name, "code", pr.code)
	hub.WriteJSON(w, http.StatusCreated, map[string]any{"request": pr.id, "device": pr.device, "code": pr.code,
		"expires_in_ms": PairTTL.Milliseconds()})
}

// pairState answers a device polling its request, authenticated by the
// secret it paired with.
func (s *Service) pairState(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dev, secret, ok := credentials(r)
	pr := s.requests[id]
	var stored *[sha256.Size]byte
	if pr != nil && ok && dev == pr.device {
		stored = &pr.hash
	}
	if !matches(stored, secret) {
		fail(w, http.StatusUnauthorized, "unauthorized", "unknown request or wrong secret")
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"state": pr.stateAt(s.now())})
}

func (s *Service) projects(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	d := s.deviceLocked(w, r)
	if d != nil {
		s.seenLocked(d)
	}
	s.mu.Unlock()
	if d == nil {
		return
	}
	type project struct {
		Name     string `json:"name"`
		Write    bool   `json:"write"`
		Terminal bool   `json:"terminal"`
	}
	out := []project{}
	for _, p := range s.o.Sessions.Projects() {
		out = append(out, project{Name: p.Name, Write: p.Write, Terminal: p.Terminal})
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"projects": out})
}

// seenLocked notes the device's activity (written to companion.json by
// the sweep, at most once a minute).
func (s *Service) seenLocked(d *device) { d.rec.LastSeen, s.seenDirty = s.now().UTC(), true }

// checkConversation: an http(s) URL's origin and path, no credentials,
// query or fragment (those may hold what is not ours to keep).
func checkConversation(c string) error {
	if c == "" || len(c) > maxConversation {
		return fmt.Errorf("conversation must be 1-%d bytes", maxConversation)
	}
	u, err := url.Parse(c)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(c, "#") {
		return errors.New("conversation must be the tab URL's origin and path (http or https, no query or fragment)")
	}
	for _, ch := range c {
		if ch <= ' ' || ch == 0x7f {
			return errors.New("conversation must not contain spaces or control characters")
		}
	}
	return nil
}

// labelPrefix starts every companion session's label.
const labelPrefix = "companion: "

// companionLabel is the label of a companion session in the operator's
// session list.
func companionLabel(name string) string {
	label := labelPrefix + name
	for len(label) > 200 {
		_, size := utf8.DecodeLastRuneInString(label)
		label = label[:len(label)-size]
	}
	return label
}

func (s *Service) bind(w http.ResponseWriter, r *http.Request) {
	var req bindBody
	if !readBody(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.deviceLocked(w, r)
	if d == nil {
		return
	}
	if err := checkConversation(req.Conversation); err != nil {
		fail(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	if session.CheckName(req.Project) != nil {
		fail(w, http.StatusNotFound, "project_not_found", "no such project")
		return
	}
	s.seenLocked(d)
	var old *binding
	n := 0
	for _, b := range s.live {
		if b.rec.Device == d.rec.ID {
			n++
			if b.rec.Conversation == req.Conversation {
				old = b
			}
		}
	}
	if old == nil && n >= MaxBindings {
		fail(w, http.StatusTooManyRequests, "too_many_bindings", fmt.Sprintf("at most %d conversations may be bound at once; disconnect one", MaxBindings))
		return
	}
	if old != nil {
		// Reconnect: the old binding's authority ends before the new one exists.
		s.endLocked(old, "reconnected")
	}
	v, err := s.o.Sessions.NewSession(req.Project, companionLabel(d.rec.Name))
	if err != nil {
		var se *session.Error
		switch {
		case errors.As(err, &se) && se.Code == session.CodeProjectNotFound:
			fail(w, http.StatusNotFound, "project_not_found", "no such project")
		case errors.As(err, &se) && (se.Code == session.CodeEnabledLimit || se.Code == session.CodeDefinitionLimit):
			fail(w, http.StatusConflict, "session_limit", se.Message)
		default:
			s.o.Log.Error("companion bind: the session could not be made", "err", err)
			fail(w, http.StatusInternalServerError, "internal", "the session could not be made")
		}
		return
	}
	g, ok := s.o.Sessions.Live(v.ID)
	if !ok {
		s.deleteSessionLocked(v.ID)
		fail(w, http.StatusServiceUnavailable, "project_unavailable", "the project's root is unavailable")
		return
	}
	// The session was live, unowned, from NewSession until here: its
	// tokens exist only in this process (and the operator's session list)
	// until the answer below hands out its Init.
	now := s.now()
	s.gen++
	b := &binding{rec: bindingRecord{ID: newID('b'), Device: d.rec.ID, Project: req.Project, Session: v.ID,
		Conversation: req.Conversation, Created: now.UTC()}, gen: s.gen, lease: &lease{g: g}}
	b.lease.expiry.Store(now.Add(s.o.Lease).UnixNano())
	s.live[b.rec.ID] = b
	s.own(v.ID, b.lease)
	// A binding companion.json does not hold would outlive a restart as a
	// session without a lease: none is handed out unrecorded.
	if err := s.saveLocked(); err != nil {
		s.endLocked(b, "companion.json could not be written")
		fail(w, http.StatusInternalServerError, "internal", "the binding could not be recorded")
		return
	}
	s.o.Log.Info("companion binding made", "binding", b.rec.ID, "device", d.rec.ID, "project", req.Project, "session", v.ID)
	hub.WriteJSON(w, http.StatusCreated, map[string]any{"binding": b.rec.ID, "session": v.ID, "generation": b.gen,
		"prompt": s.o.Prompt(g.Token(route.CapInit)), "lease_ms": s.o.Lease.Milliseconds(), "heartbeat_ms": s.heartbeatEvery().Milliseconds()})
}

func (s *Service) heartbeat(w http.ResponseWriter, r *http.Request) {
	var req heartbeatBody
	if !readBody(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.deviceLocked(w, r)
	if d == nil {
		return
	}
	if req.Seq < 1 || len(req.Bindings) > maxItems {
		fail(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("seq must be a positive integer and bindings at most %d", maxItems))
		return
	}
	if req.Seq <= d.lastSeq {
		fail(w, http.StatusConflict, "stale_heartbeat", "seq is not greater than the last one accepted")
		return
	}
	d.lastSeq = req.Seq
	s.seenLocked(d)
	now := s.now()
	type state struct {
		Binding string `json:"binding"`
		State   string `json:"state"`
	}
	out := make([]state, 0, len(req.Bindings))
	for _, it := range req.Bindings {
		st := "ended"
		if b := s.live[it.Binding]; b != nil && b.rec.Device == d.rec.ID && b.gen == it.Generation && s.checkLocked(b, now) {
			b.lease.expiry.Store(now.Add(s.o.Lease).UnixNano())
			st = "live"
		}
		out = append(out, state{Binding: it.Binding, State: st})
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"bindings": out, "lease_ms": s.o.Lease.Milliseconds()})
}

func (s *Service) disconnect(w http.ResponseWriter, r *http.Request) {
	var req disconnectBody
	if !readBody(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.deviceLocked(w, r)
	if d == nil {
		return
	}
	s.seenLocked(d)
	if b := s.live[req.Binding]; b != nil && b.rec.Device == d.rec.ID {
		s.endLocked(b, "disconnected")
	} else if !s.endedOf(d.rec.ID, req.Binding) {
		fail(w, http.StatusNotFound, "binding_not_found", "no such binding of this device")
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"binding": req.Binding, "state": "ended"})
}

// endedOf reports whether id is an ended binding of device.
func (s *Service) endedOf(device, id string) bool {
	for _, b := range s.history {
		if b.ID == id && b.Device == device {
			return true
		}
	}
	return false
}
