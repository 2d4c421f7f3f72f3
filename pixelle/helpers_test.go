package pixelle

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub/ws"
)

const website = "https://pixelle.example"

const wait = 5 * time.Second

// testRelay is a started relay plus its harness.
type testRelay struct {
	*adaptertest.Harness
	s *Server
}

// startRelay runs a relay on a free port; tune adjusts timers and limits
// before Serve.
func startRelay(t *testing.T, tune func(*Server)) *testRelay {
	t.Helper()
	s := New(&Config{Website: website})
	if tune != nil {
		tune(s)
	}
	h := adaptertest.Start(t, s, adaptertest.Options{})
	return &testRelay{Harness: h, s: s}
}

// run is the relay's current run (nil while it does not serve).
func (r *testRelay) run() *relay { return r.s.cur.Load() }

func browserHeader() http.Header { return http.Header{"Origin": {website}} }

// createSession is POST /api/sessions from the website.
func (r *testRelay) createSession(t *testing.T) (id, token string) {
	t.Helper()
	resp := r.Do(adaptertest.Request{Method: "POST", Path: "/api/sessions", Header: browserHeader()})
	if resp.Status != 201 {
		t.Fatalf("create session: %d %s", resp.Status, resp.Body)
	}
	var v struct{ ID, BrowserToken string }
	mustUnmarshal(t, resp.Body, &v)
	return v.ID, v.BrowserToken
}

// dial opens /relay and sends hello; it does not wait for ready.
func (r *testRelay) dial(t *testing.T, origin string, hello map[string]string) *adaptertest.WSClient {
	t.Helper()
	c := r.MustDial("/relay", adaptertest.DialOptions{Origin: origin})
	if hello != nil {
		sendJSON(t, c, hello)
	}
	return c
}

// browser connects an authenticated browser for a session.
func (r *testRelay) browser(t *testing.T, id, tok string) *adaptertest.WSClient {
	t.Helper()
	c := r.dial(t, website, map[string]string{"type": "hello", "role": "browser", "sessionId": id, "token": tok})
	m := next(t, c)
	if m["type"] != "ready" || m["role"] != "browser" {
		t.Fatalf("browser hello answered %v", m)
	}
	return c
}

// agent connects an authenticated agent.
func (r *testRelay) agent(t *testing.T, id, tok string) *adaptertest.WSClient {
	t.Helper()
	c := r.dial(t, "", map[string]string{"type": "hello", "role": "agent", "sessionId": id, "token": tok})
	m := next(t, c)
	if m["type"] != "ready" || m["role"] != "agent" || m["paired"] != true {
		t.Fatalf("agent hello answered %v", m)
	}
	return c
}

// code asks the browser for a pairing code.
func code(t *testing.T, b *adaptertest.WSClient) string {
	t.Helper()
	sendJSON(t, b, map[string]string{"type": "pair.create"})
	m := next(t, b)
	if m["type"] != "pair.code" {
		t.Fatalf("pair.create answered %v", m)
	}
	return m["code"].(string)
}

// pair exchanges a code and returns the pair result.
func (r *testRelay) pair(t *testing.T, code string) pairResult {
	t.Helper()
	resp := r.Do(adaptertest.Request{Method: "POST", Path: "/api/pair", Body: []byte(`{"code":"` + code + `"}`)})
	if resp.Status != 200 {
		t.Fatalf("pair: %d %s", resp.Status, resp.Body)
	}
	var v pairResult
	mustUnmarshal(t, resp.Body, &v)
	return v
}

// paired is a session with a browser and one agent.
type paired struct {
	id, browserToken string
	b, a             *adaptertest.WSClient
	creds            pairResult
}

func (r *testRelay) paired(t *testing.T) paired {
	t.Helper()
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	creds := r.pair(t, code(t, b))
	if m := next(t, b); m["type"] != "paired" {
		t.Fatalf("browser got %v, want paired", m)
	}
	a := r.agent(t, creds.SessionID, creds.Token)
	return paired{id: id, browserToken: tok, b: b, a: a, creds: creds}
}

func sendJSON(t *testing.T, c *adaptertest.WSClient, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SendText(string(b)); err != nil {
		t.Fatalf("send: %v", err)
	}
}

func next(t *testing.T, c *adaptertest.WSClient) map[string]any {
	t.Helper()
	msg, err := c.Next(wait)
	if err != nil {
		code, reason := c.CloseCode()
		t.Fatalf("next: %v (close %d %q)", err, code, reason)
	}
	var m map[string]any
	mustUnmarshal(t, msg.Data, &m)
	return m
}

// nextRaw returns the next frame's bytes.
func nextRaw(t *testing.T, c *adaptertest.WSClient) string {
	t.Helper()
	msg, err := c.Next(wait)
	if err != nil {
		t.Fatalf("next: %v", err)
	}
	return msg.Text()
}

// quiet asserts nothing arrives for a short while.
func quiet(t *testing.T, c *adaptertest.WSClient) {
	t.Helper()
	if msg, err := c.Next(150 * time.Millisecond); err == nil {
		t.Fatalf("unexpected frame %s", msg.Data)
	}
}

// closedWith waits for the server to close c and checks the code.
func closedWith(t *testing.T, c *adaptertest.WSClient, want uint16) {
	t.Helper()
	for {
		select {
		case <-c.Closed():
			if got, reason := c.CloseCode(); got != want {
				t.Fatalf("close code %d %q, want %d", got, reason, want)
			}
			return
		case <-time.After(wait):
			t.Fatalf("connection not closed (want %d)", want)
		}
	}
}

func mustUnmarshal(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("unmarshal %q: %v", b, err)
	}
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func cmdMsg(id string, cmd string) string {
	return fmt.Sprintf(`{"type":"command","id":%q,"command":%s}`, id, cmd)
}

func hubHeartbeat(interval, dead time.Duration) ws.HeartbeatConfig {
	return ws.HeartbeatConfig{Interval: interval, DeadAfter: dead}
}

// agents counts live authenticated agent connections.
func (r *testRelay) agents() int {
	r.run().mu.Lock()
	defer r.run().mu.Unlock()
	n := 0
	for _, sess := range r.run().sessions {
		n += len(sess.agents)
	}
	return n
}
