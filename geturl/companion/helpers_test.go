package companion

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/gateway"
	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/session"
)

const (
	testPort   = 47433
	testOrigin = "chrome-extension://abcdefghijklmnopabcdefghijklmnop"
	testLease  = 15 * time.Second
)

// clock is the injected clock, shared with the gateway's goroutines.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// syncBuffer is a log sink the handlers may write to concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness is a companion over a real session manager (one read-only and
// one writable project) with the real data-plane gateway in front of its
// Lookup.
type harness struct {
	t     testing.TB
	dir   string
	clock *clock
	logs  *syncBuffer
	mgr   *session.Manager
	svc   *Service
	gw    *httptest.Server
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), clock: &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}, logs: &syncBuffer{}}
	state := filepath.Join(h.dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(h.dir, "proj")
	os.Mkdir(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "a.txt"), []byte("hello\n"), 0o644)
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	mgr, err := session.Open(session.Options{Path: filepath.Join(state, "registry.json"), Log: log, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mgr.AddProject(proj, "ro", route.Permissions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := mgr.AddProject(proj, "rw", route.Permissions{Write: true, Terminal: true}); err != nil {
		t.Fatal(err)
	}
	h.mgr = mgr
	h.svc = h.open()
	srv := httptest.NewUnstartedServer(nil)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	srv.Config.Handler = gateway.New(gateway.Options{Sessions: h.svc, Kernel: kernel.New(kernel.Options{NoRG: true}), Port: port,
		PublicOrigin: func() string { return "" }})
	srv.Start()
	t.Cleanup(srv.Close)
	h.gw = srv
	return h
}

func (h *harness) path() string { return filepath.Join(h.dir, "state", FileName) }

// open opens a Service on the harness's file, as a new run would.
func (h *harness) open() *Service {
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return Open(Options{Path: h.path(), Sessions: h.mgr, Lease: testLease, ControlPort: testPort, Now: h.clock.Now, Log: log,
		Prompt: func(tok string) string { return "PROMPT http://127.0.0.1/v0/init/" + tok }})
}

// answer is a /companion/ response.
type answer struct {
	status int
	body   map[string]any
	raw    string
}

func (a answer) str(k string) string { s, _ := a.body[k].(string); return s }

// do sends a request to the device API as the extension does.
func (h *harness) do(method, path, auth, body string, edit ...func(*http.Request)) answer {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, path, rd)
	r.Host = "127.0.0.1:47433"
	r.Header.Set("Origin", testOrigin)
	if auth != "" {
		r.Header.Set("Authorization", "Bearer "+auth)
	}
	for _, e := range edit {
		e(r)
	}
	w := httptest.NewRecorder()
	h.svc.Handler().ServeHTTP(w, r)
	a := answer{status: w.Code, raw: w.Body.String()}
	json.Unmarshal(w.Body.Bytes(), &a.body)
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		h.t.Fatalf("%s %s: Content-Type %q", method, path, ct)
	}
	return a
}

func newSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// pairing is a pairing request as the extension holds it.
type pairing struct {
	secret, request, device, code string
}

func (p pairing) cred() string { return p.device + "." + p.secret }

func (h *harness) pair(name string) (pairing, answer) {
	h.t.Helper()
	p := pairing{secret: newSecret()}
	a := h.do("POST", "/companion/pair", "", `{"name":`+quote(name)+`,"secret":"`+p.secret+`"}`)
	p.request, p.device, p.code = a.str("request"), a.str("device"), a.str("code")
	return p, a
}

// paired pairs and approves a device.
func (h *harness) paired(name string) pairing {
	h.t.Helper()
	p, a := h.pair(name)
	if a.status != http.StatusCreated {
		h.t.Fatalf("pair: %d %s", a.status, a.raw)
	}
	if err := h.svc.Approve(p.request); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// bound is a bind's answer.
type bound struct {
	binding, session, prompt string
	generation               int64
}

func (h *harness) bind(p pairing, project, conv string) (bound, answer) {
	h.t.Helper()
	a := h.do("POST", "/companion/bind", p.cred(), `{"project":"`+project+`","conversation":"`+conv+`"}`)
	g, _ := a.body["generation"].(float64)
	return bound{binding: a.str("binding"), session: a.str("session"), prompt: a.str("prompt"), generation: int64(g)}, a
}

func (h *harness) mustBind(p pairing, project, conv string) bound {
	h.t.Helper()
	b, a := h.bind(p, project, conv)
	if a.status != http.StatusCreated {
		h.t.Fatalf("bind: %d %s", a.status, a.raw)
	}
	return b
}

func (h *harness) heartbeat(p pairing, seq int64, bs ...bound) answer {
	h.t.Helper()
	var items []string
	for _, b := range bs {
		items = append(items, `{"binding":"`+b.binding+`","generation":`+itoa(b.generation)+`}`)
	}
	return h.do("POST", "/companion/heartbeat", p.cred(), `{"seq":`+itoa(seq)+`,"bindings":[`+strings.Join(items, ",")+`]}`)
}

// states is a heartbeat answer's binding → state.
func states(a answer) map[string]string {
	out := map[string]string{}
	list, _ := a.body["bindings"].([]any)
	for _, it := range list {
		m, _ := it.(map[string]any)
		b, _ := m["binding"].(string)
		s, _ := m["state"].(string)
		out[b] = s
	}
	return out
}

// initToken is the Init token in a bind's prompt.
func initToken(prompt string) string {
	_, tok, _ := strings.Cut(prompt, "/v0/init/")
	return tok
}

// dataGet fetches a data-plane target; it answers status and body.
func (h *harness) dataGet(target string) (int, string) {
	h.t.Helper()
	resp, err := h.gw.Client().Get(h.gw.URL + target)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// readToken is the read token of a live session's generation, "" when
// the session has none.
func (h *harness) readToken(sessionID string) string {
	g, ok := h.mgr.Live(sessionID)
	if !ok {
		return ""
	}
	return g.Token(route.CapRead)
}

// unknownAnswer is what the data plane answers a token that never
// existed: an ended capability must look exactly like it.
func (h *harness) unknownAnswer(init bool) (int, string) {
	if init {
		return h.dataGet("/v0/init/" + strings.Repeat("Q", 43))
	}
	return h.dataGet("/v0/" + strings.Repeat("Q", 43) + "/r?path=a.txt")
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func hashHex(secret string) string {
	h, _ := secretHash(secret)
	return hex.EncodeToString(h[:])
}

func sessionChange(write *bool) session.ProjectChange {
	t := false
	return session.ProjectChange{Write: write, Terminal: &t}
}

func jsonUnmarshal(b []byte, v any) { json.Unmarshal(b, v) }
