package pixelle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
)

func TestBrowserAuth(t *testing.T) {
	r := startRelay(t, nil)
	id, tok := r.createSession(t)
	for _, tc := range []struct {
		name   string
		origin string
		frame  string
	}{
		{"wrong token", website, fmt.Sprintf(`{"type":"hello","role":"browser","sessionId":%q,"token":"x"}`, id)},
		{"unknown session", website, fmt.Sprintf(`{"type":"hello","role":"browser","sessionId":"nope","token":%q}`, tok)},
		{"no origin", "", fmt.Sprintf(`{"type":"hello","role":"browser","sessionId":%q,"token":%q}`, id, tok)},
		{"browser token as agent", "", fmt.Sprintf(`{"type":"hello","role":"agent","sessionId":%q,"token":%q}`, id, tok)},
		{"unknown role", website, fmt.Sprintf(`{"type":"hello","role":"admin","sessionId":%q,"token":%q}`, id, tok)},
		{"wrong field types", website, `{"type":"hello","role":"browser","sessionId":1,"token":true}`},
		{"not hello first", website, `{"type":"pair.create"}`},
		{"malformed JSON", website, `{"type":`},
		{"not an object", website, `["hello"]`},
		{"empty", website, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := r.dial(t, tc.origin, nil)
			if err := c.SendText(tc.frame); err != nil {
				t.Fatal(err)
			}
			closedWith(t, c, 1008)
		})
	}
	t.Run("binary frame", func(t *testing.T) {
		c := r.dial(t, website, nil)
		c.SendBinary([]byte(`{"type":"hello"}`))
		closedWith(t, c, 1008)
	})
	// The real browser still authenticates afterwards; unpaired so far.
	b := r.dial(t, website, map[string]string{"type": "hello", "role": "browser", "sessionId": id, "token": tok})
	if m := next(t, b); m["type"] != "ready" || m["role"] != "browser" || m["paired"] != false {
		t.Fatalf("ready %v", m)
	}
}

func TestFactory(t *testing.T) {
	f := Factory()
	cfg := f.NewConfig().(*Config)
	if cfg.Port != DefaultPort || !cfg.Enabled || cfg.NeedsUser() == "" {
		t.Fatalf("defaults %+v", cfg)
	}
	cfg.Website, cfg.Port = website, 0
	if err := cfg.Validate(); err != nil || cfg.NeedsUser() != "" {
		t.Fatalf("configured: %v %q", err, cfg.NeedsUser())
	}
	a, err := f.New(cfg)
	if err != nil || f.Name != "pixelle" {
		t.Fatalf("New: %v (factory %q)", err, f.Name)
	}
	h := adaptertest.Start(t, a, adaptertest.Options{})
	resp := h.Do(adaptertest.Request{Path: "/health", Header: browserHeader()})
	if resp.Status != 200 || resp.Header.Get("Access-Control-Allow-Origin") != website {
		t.Fatalf("health through the factory-built relay: %d", resp.Status)
	}
	if err := h.Stop(); err != nil {
		t.Fatalf("clean shutdown returned %v", err)
	}
	if st := a.Status(); len(st.Ports) != 0 {
		t.Fatalf("ports reported after shutdown: %v", st.Ports)
	}
}

func TestAuthTimeout(t *testing.T) {
	r := startRelay(t, func(s *Server) { s.AuthTimeout = 100 * time.Millisecond })
	c := r.dial(t, website, nil)
	closedWith(t, c, 1008)
	if _, reason := c.CloseCode(); !strings.Contains(reason, "timeout") {
		t.Errorf("reason %q", reason)
	}
}

func TestDuplicateBrowserRejected(t *testing.T) {
	r := startRelay(t, nil)
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	dup := r.dial(t, website, map[string]string{"type": "hello", "role": "browser", "sessionId": id, "token": tok})
	if m := next(t, dup); errCode(m) != "BROWSER_ALREADY_CONNECTED" {
		t.Fatalf("duplicate got %v", m)
	}
	closedWith(t, dup, 1013)
	// The first browser is untouched.
	code(t, b)
}

func TestRoleCannotChange(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	sendJSON(t, p.a, map[string]string{"type": "hello", "role": "browser", "sessionId": p.id, "token": p.browserToken})
	closedWith(t, p.a, 1008)
	sendJSON(t, p.b, map[string]string{"type": "hello", "role": "agent", "sessionId": p.id, "token": p.creds.Token})
	closedWith(t, p.b, 1008)
}

func TestMalformedAfterAuthCloses(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	p.a.SendText(`{"type":"command",`)
	closedWith(t, p.a, 1008)
	p.b.SendText(`42`)
	closedWith(t, p.b, 1008)
}

func TestRouting(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	cmd := `{"method":"state.read"}`
	p.a.SendText(cmdMsg("client-1", cmd))
	fwd := next(t, p.b)
	relayID, _ := fwd["id"].(string)
	if fwd["type"] != "command" || fwd["actor"] != "agent" || relayID == "" || relayID == "client-1" {
		t.Fatalf("browser got %v", fwd)
	}
	if c, _ := fwd["command"].(map[string]any); c["method"] != "state.read" {
		t.Fatalf("command changed: %v", fwd["command"])
	}
	result := `{"projectId":"example","title":"Example","revision":0,"selection":[],"nodes":[],"edges":[]}`
	p.b.SendText(fmt.Sprintf(`{"type":"result","id":%q,"result":%s}`, relayID, result))
	got := nextRaw(t, p.a)
	if want := `{"type":"result","id":"client-1","result":` + result + `}`; got != want {
		t.Fatalf("agent got %s\nwant %s", got, want)
	}
	// Error payloads pass through unchanged.
	p.a.SendText(cmdMsg("client-2", `{"method":"nodes.delete","expectedRevision":0,"operationId":"d1","params":{"ids":["x"]}}`))
	relayID = next(t, p.b)["id"].(string)
	errPayload := `{"code":"REVISION_CONFLICT","message":"Read state and rebase.","currentRevision":1}`
	p.b.SendText(fmt.Sprintf(`{"type":"result","id":%q,"error":%s}`, relayID, errPayload))
	if got := nextRaw(t, p.a); got != `{"type":"result","id":"client-2","error":`+errPayload+`}` {
		t.Fatalf("agent got %s", got)
	}
	// A result is accepted once only.
	p.b.SendText(fmt.Sprintf(`{"type":"result","id":%q,"result":{}}`, relayID))
	if m := next(t, p.b); errCode(m) != "UNKNOWN_REQUEST" {
		t.Fatalf("duplicate result answered %v", m)
	}
	quiet(t, p.a)
}

func TestTimerClearedOnCompletion(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	p.a.SendText(cmdMsg("done", `{"method":"state.read"}`))
	id := next(t, p.b)["id"].(string)
	r.run().mu.Lock()
	var pe *pending
	for _, sess := range r.run().sessions {
		if sess.pending[id] != nil {
			pe = sess.pending[id]
		}
	}
	r.run().mu.Unlock()
	if pe == nil {
		t.Fatal("no pending entry for a routed command")
	}
	p.b.SendText(fmt.Sprintf(`{"type":"result","id":%q,"result":{}}`, id))
	next(t, p.a)
	// The 12 s timer cannot have fired yet, so false means it was stopped.
	if pe.timer.Stop() {
		t.Fatal("the command timer was still running after the result")
	}
}

func TestSameClientIDFromTwoAgents(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	a2 := r.agent(t, p.creds.SessionID, p.creds.Token)
	p.a.SendText(cmdMsg("same", `{"method":"state.read"}`))
	id1 := next(t, p.b)["id"].(string)
	a2.SendText(cmdMsg("same", `{"method":"selection.read"}`))
	id2 := next(t, p.b)["id"].(string)
	if id1 == id2 {
		t.Fatal("relay ids repeat for the same client id")
	}
	// Answer in reverse order; each agent gets its own answer.
	p.b.SendText(fmt.Sprintf(`{"type":"result","id":%q,"result":{"who":2}}`, id2))
	p.b.SendText(fmt.Sprintf(`{"type":"result","id":%q,"result":{"who":1}}`, id1))
	if got := nextRaw(t, a2); got != `{"type":"result","id":"same","result":{"who":2}}` {
		t.Fatalf("agent 2 got %s", got)
	}
	if got := nextRaw(t, p.a); got != `{"type":"result","id":"same","result":{"who":1}}` {
		t.Fatalf("agent 1 got %s", got)
	}
}

func TestSessionsIsolated(t *testing.T) {
	r := startRelay(t, nil)
	p1 := r.paired(t)
	p2 := r.paired(t)
	p1.a.SendText(cmdMsg("q", `{"method":"state.read"}`))
	id1 := next(t, p1.b)["id"].(string)
	quiet(t, p2.b)
	// Session 2's browser cannot answer session 1's request.
	p2.b.SendText(fmt.Sprintf(`{"type":"result","id":%q,"result":{"leak":true}}`, id1))
	if m := next(t, p2.b); errCode(m) != "UNKNOWN_REQUEST" {
		t.Fatalf("foreign result answered %v", m)
	}
	quiet(t, p1.a)
	quiet(t, p2.a)
	// Session 1's agent token does not open session 2.
	c := r.dial(t, "", map[string]string{"type": "hello", "role": "agent", "sessionId": p2.id, "token": p1.creds.Token})
	closedWith(t, c, 1008)
	// An agent cannot inject results.
	p2.a.SendText(fmt.Sprintf(`{"type":"result","id":%q,"result":{}}`, id1))
	if m := next(t, p2.a); errCode(m) != "UNKNOWN_TYPE" {
		t.Fatalf("agent result answered %v", m)
	}
	quiet(t, p1.a)
	// The real answer still arrives.
	p1.b.SendText(fmt.Sprintf(`{"type":"result","id":%q,"result":{"ok":1}}`, id1))
	if got := nextRaw(t, p1.a); got != `{"type":"result","id":"q","result":{"ok":1}}` {
		t.Fatalf("agent got %s", got)
	}
}

func TestCommandValidation(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	long := strings.Repeat("x", 101)
	for _, tc := range []struct {
		frame string
		id    any
	}{
		{cmdMsg(long, `{"method":"state.read"}`), nil},
		{`{"type":"command","id":7,"command":{"method":"state.read"}}`, nil},
		{`{"type":"command","command":{"method":"state.read"}}`, nil},
		{cmdMsg(strings.Repeat("😀", 51), `{"method":"state.read"}`), nil}, // 102 UTF-16 units
		{`{"type":"command","id":"a","command":"state.read"}`, "a"},
		{`{"type":"command","id":"a","command":null}`, "a"},
		{`{"type":"command","id":"a"}`, "a"},
	} {
		p.a.SendText(tc.frame)
		m := next(t, p.a)
		if m["type"] != "result" || errCode(m) != "INVALID_REQUEST" || m["id"] != tc.id {
			t.Errorf("%s answered %v", tc.frame, m)
		}
	}
	quiet(t, p.b)
	// Any string of at most 100 characters (UTF-16 units, as JavaScript
	// counts them) is an id, the empty one included.
	for _, id := range []string{strings.Repeat("y", 100), strings.Repeat("😀", 50), ""} {
		p.a.SendText(cmdMsg(id, `{"method":"state.read"}`))
		m := next(t, p.b)
		sendJSON(t, p.b, map[string]any{"type": "result", "id": m["id"], "result": map[string]any{"revision": 1}})
		if m := next(t, p.a); m["type"] != "result" || m["id"] != id || m["error"] != nil {
			t.Errorf("id %q: agent got %v", id, m)
		}
	}
	// Unknown agent message types get a notice, not a close.
	p.a.SendText(`{"type":"pair.create"}`)
	if m := next(t, p.a); errCode(m) != "UNKNOWN_TYPE" {
		t.Fatalf("got %v", m)
	}
	// Bad browser results are answered, not routed.
	for _, f := range []string{`{"type":"result","id":"r1"}`, `{"type":"result","id":"r1","result":1,"error":2}`, `{"type":"result","id":5,"result":1}`} {
		p.b.SendText(f)
		if m := next(t, p.b); errCode(m) != "INVALID_RESULT" {
			t.Errorf("%s answered %v", f, m)
		}
	}
	p.b.SendText(`{"type":"command","id":"x","command":{}}`)
	if m := next(t, p.b); errCode(m) != "NOT_ALLOWED" {
		t.Errorf("browser command answered %v", m)
	}
}

func TestBrowserOffline(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	p.b.Close()
	<-p.b.Closed()
	deadline := time.Now().Add(wait)
	for {
		p.a.SendText(cmdMsg("c", `{"method":"state.read"}`))
		m := next(t, p.a)
		if errCode(m) == "BROWSER_OFFLINE" && m["id"] == "c" {
			break
		}
		if errCode(m) != "OUTCOME_UNKNOWN" || time.Now().After(deadline) {
			t.Fatalf("got %v", m)
		}
	}
}

func TestBusy(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	for i := range 20 {
		p.a.SendText(cmdMsg(fmt.Sprint("c", i), `{"method":"state.read"}`))
		next(t, p.b)
	}
	p.a.SendText(cmdMsg("c20", `{"method":"state.read"}`))
	if m := next(t, p.a); errCode(m) != "BUSY" || m["id"] != "c20" {
		t.Fatalf("21st command: %v", m)
	}
	quiet(t, p.b)
}

func TestOutcomeUnknownOnBrowserDisconnect(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	p.a.SendText(cmdMsg("w", `{"method":"nodes.delete","expectedRevision":3,"operationId":"op","params":{"ids":["a"]}}`))
	next(t, p.b)
	p.b.Close()
	m := next(t, p.a)
	if errCode(m) != "OUTCOME_UNKNOWN" || m["id"] != "w" {
		t.Fatalf("got %v", m)
	}
	if msg := m["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "operationId") {
		t.Errorf("message lacks recovery advice: %q", msg)
	}
}

func TestOutcomeUnknownOnTimeout(t *testing.T) {
	r := startRelay(t, func(s *Server) { s.CommandTimeout = 100 * time.Millisecond })
	p := r.paired(t)
	p.a.SendText(cmdMsg("slow", `{"method":"state.read"}`))
	id := next(t, p.b)["id"].(string)
	if m := next(t, p.a); errCode(m) != "OUTCOME_UNKNOWN" || m["id"] != "slow" {
		t.Fatalf("got %v", m)
	}
	// A late answer is not forwarded: the entry and its timer are gone.
	p.b.SendText(fmt.Sprintf(`{"type":"result","id":%q,"result":{}}`, id))
	if m := next(t, p.b); errCode(m) != "UNKNOWN_REQUEST" {
		t.Fatalf("late result answered %v", m)
	}
	quiet(t, p.a)
	r.run().mu.Lock()
	n := 0
	for _, sess := range r.run().sessions {
		n += len(sess.pending)
	}
	r.run().mu.Unlock()
	if n != 0 {
		t.Fatalf("%d pending entries left", n)
	}
}

func TestAgentDisconnectDropsPending(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	a2 := r.agent(t, p.creds.SessionID, p.creds.Token)
	p.a.SendText(cmdMsg("c", `{"method":"state.read"}`))
	id := next(t, p.b)["id"].(string)
	p.a.Close()
	<-p.a.Closed()
	adaptertest.WaitFor(t, "the agent's close", func() bool { return r.agents() == 1 })
	p.b.SendText(fmt.Sprintf(`{"type":"result","id":%q,"result":{"x":1}}`, id))
	if m := next(t, p.b); errCode(m) != "UNKNOWN_REQUEST" {
		t.Fatalf("result for a departed agent answered %v", m)
	}
	// Never rerouted to the other agent of the session.
	quiet(t, a2)
}

func TestRevoke(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	c := code(t, p.b) // an outstanding code dies too
	p.a.SendText(cmdMsg("w", `{"method":"state.read"}`))
	next(t, p.b)
	sendJSON(t, p.b, map[string]string{"type": "revoke"})
	if m := next(t, p.b); m["type"] != "revoked" {
		t.Fatalf("revoke answered %v", m)
	}
	if m := next(t, p.a); errCode(m) != "OUTCOME_UNKNOWN" {
		t.Fatalf("pending after revoke: %v", m)
	}
	closedWith(t, p.a, 1008)
	again := r.dial(t, "", map[string]string{"type": "hello", "role": "agent", "sessionId": p.id, "token": p.creds.Token})
	closedWith(t, again, 1008)
	if st, _ := pairStatus(r, `{"code":"`+c+`"}`); st != 400 {
		t.Fatalf("code after revoke: %d", st)
	}
	// The browser stays connected and unpaired; it can pair again.
	res := r.pair(t, code(t, p.b))
	r.agent(t, res.SessionID, res.Token)
}

func TestReadyReportsPaired(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	p.b.Close()
	<-p.b.Closed()
	deadline := time.Now().Add(wait)
	for {
		b := r.dial(t, website, map[string]string{"type": "hello", "role": "browser", "sessionId": p.id, "token": p.browserToken})
		m, err := b.Next(wait)
		if err == nil {
			var v map[string]any
			mustUnmarshal(t, m.Data, &v)
			if v["type"] == "ready" {
				if v["paired"] != true {
					t.Fatalf("ready %v, want paired", v)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("browser could not reconnect")
		}
	}
}

func TestMessageLimit(t *testing.T) {
	r := startRelay(t, func(s *Server) { s.MaxMessage = 64 << 10 })
	p := r.paired(t)
	big := cmdMsg("big", `{"method":"state.read","pad":"`+strings.Repeat("a", 64<<10)+`"}`)
	p.a.SendText(big)
	closedWith(t, p.a, 1009)
	quiet(t, p.b)
}

func TestDefaultMessageLimit(t *testing.T) {
	r := startRelay(t, nil)
	c := r.dial(t, website, nil)
	c.SendText(`{"type":"hello","pad":"` + strings.Repeat("a", 2<<20) + `"}`)
	select {
	case <-c.Closed():
	case <-time.After(wait):
		t.Fatal("an over-limit message did not close the connection")
	}
	// The relay closes with 1009 without reading the rest of the message, so
	// the peer may see a reset before the close frame; the relay's own
	// account of the close is what proves the limit.
	if code, _ := c.CloseCode(); code == 1009 {
		return
	}
	adaptertest.WaitFor(t, "the relay to log its 1009", func() bool { return strings.Contains(r.Logs(), "code=1009") })
}

func TestShutdownClosesEverything(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	p.a.SendText(cmdMsg("w", `{"method":"state.read"}`))
	next(t, p.b)
	rl := r.run()
	if err := r.Stop(); err != nil {
		t.Fatalf("Serve returned %v", err)
	}
	closedWith(t, p.b, 1001)
	// the agent learns what became of its command before the close
	if m := next(t, p.a); m["type"] != "result" || m["id"] != "w" || errCode(m) != "OUTCOME_UNKNOWN" {
		t.Fatalf("agent got %v, want the command's OUTCOME_UNKNOWN", m)
	}
	closedWith(t, p.a, 1001)
	if r.run() != nil {
		t.Fatal("the stopped relay is still the current one")
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if len(rl.sessions) != 0 || len(rl.conns) != 0 {
		t.Fatalf("state left after shutdown: %d sessions, %d connections", len(rl.sessions), len(rl.conns))
	}
}

func TestStatusAndLifecycle(t *testing.T) {
	r := startRelay(t, nil)
	st := r.s.Status()
	if len(st.Ports) != 1 || st.Ports[0] != r.Port() || st.PageAttached || st.Note == "" {
		t.Fatalf("status before a page: %+v", st)
	}
	p := r.paired(t)
	st = r.s.Status()
	if !st.PageAttached || st.AgentSessions != 1 || st.LastActivity.IsZero() || st.Note != "" {
		t.Fatalf("status with a page and an agent: %+v", st)
	}
	act := r.Lifecycle.Activity("pixelle")
	if !act.PageEverAttached || act.LastAgent.IsZero() {
		t.Fatalf("lifecycle %+v", act)
	}
	_ = p
}

// Sessions and tokens live in memory, so a restart invalidates all of
// them: the same Server served again knows no session, browser token,
// agent token or in-process pairing of its last run, and its status
// starts afresh.
func TestARestartForgetsEverySessionAndToken(t *testing.T) {
	s := New(&Config{Website: website})
	first := &testRelay{Harness: adaptertest.Start(t, s, adaptertest.Options{}), s: s}
	p := first.paired(t)
	bridgePair(t, first, p.b) // replaces p's agent: the session's token is the in-process one now
	rl := first.run()
	rl.mu.Lock()
	agentToken := rl.bridgeToken
	rl.mu.Unlock()
	if err := first.Stop(); err != nil {
		t.Fatalf("Serve returned %v", err)
	}
	if st := s.Status(); len(st.Ports) != 0 || st.PageAttached || st.AgentSessions != 0 {
		t.Fatalf("status of a stopped relay: %+v", st)
	}
	if _, err := s.BridgeTools(); !errors.Is(err, adapters.ErrNoPage) {
		t.Fatalf("in-process tools of a stopped relay: %v", err)
	}

	second := &testRelay{Harness: adaptertest.Start(t, s, adaptertest.Options{}), s: s}
	b := second.dial(t, website, map[string]string{"type": "hello", "role": "browser", "sessionId": p.id, "token": p.browserToken})
	closedWith(t, b, closePolicy)
	a := second.dial(t, "", map[string]string{"type": "hello", "role": "agent", "sessionId": p.id, "token": agentToken})
	closedWith(t, a, closePolicy)
	id, tok := second.createSession(t)
	second.browser(t, id, tok)
	if _, err := s.BridgeCall(context.Background(), "state.read", json.RawMessage(`{}`)); toolErr(t, err).Code != codeNotPaired {
		t.Fatalf("the in-process agent after a restart: %v", err)
	}
	if st := s.Status(); len(st.Ports) != 1 || st.Ports[0] != second.Port() || !st.PageAttached || st.AgentSessions != 0 {
		t.Fatalf("status after a restart: %+v", st)
	}
}

func TestHeartbeatDropsSilentBrowser(t *testing.T) {
	s := New(&Config{Website: website})
	h := adaptertest.Start(t, s, adaptertest.Options{Heartbeat: hubHeartbeat(50*time.Millisecond, 200*time.Millisecond)})
	r := &testRelay{Harness: h, s: s}
	id, tok := r.createSession(t)
	b := r.MustDial("/relay", adaptertest.DialOptions{Origin: website, NoPong: true})
	sendJSON(t, b, map[string]string{"type": "hello", "role": "browser", "sessionId": id, "token": tok})
	next(t, b)
	<-b.Closed()
	if b.Pings() == 0 {
		t.Fatal("no pings before the drop")
	}
}

// pendingTimer returns the timer of the routed command relayID.
func (r *testRelay) pendingTimer(t *testing.T, relayID string) *time.Timer {
	t.Helper()
	r.run().mu.Lock()
	defer r.run().mu.Unlock()
	for _, sess := range r.run().sessions {
		if pe := sess.pending[relayID]; pe != nil {
			return pe.timer
		}
	}
	t.Fatalf("no pending entry for %s", relayID)
	return nil
}

// TestTimersClearedOnRevokeRepairAndShutdown: the contract clears command
// timers on completion (TestTimerClearedOnCompletion), revocation and
// shutdown; a new pairing that closes the earlier agents clears theirs.
// A timer still armed would Stop() with true.
func TestTimersClearedOnRevokeRepairAndShutdown(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)

	p.a.SendText(cmdMsg("w1", `{"method":"state.read"}`))
	tm := r.pendingTimer(t, next(t, p.b)["id"].(string))
	sendJSON(t, p.b, map[string]string{"type": "revoke"})
	if m := next(t, p.b); m["type"] != "revoked" {
		t.Fatalf("revoke answered %v", m)
	}
	if tm.Stop() {
		t.Fatal("revoke left a command timer running")
	}

	res := r.pair(t, code(t, p.b))
	next(t, p.b) // paired
	a := r.agent(t, res.SessionID, res.Token)
	a.SendText(cmdMsg("w2", `{"method":"state.read"}`))
	tm = r.pendingTimer(t, next(t, p.b)["id"].(string))
	r.pair(t, code(t, p.b))
	next(t, p.b) // paired
	if tm.Stop() {
		t.Fatal("a new pairing left the replaced agent's command timer running")
	}
	closedWith(t, a, 1008)

	res = r.pair(t, code(t, p.b))
	next(t, p.b)
	a = r.agent(t, res.SessionID, res.Token)
	a.SendText(cmdMsg("w3", `{"method":"state.read"}`))
	tm = r.pendingTimer(t, next(t, p.b)["id"].(string))
	rl := r.run()
	rl.mu.Lock()
	sessions := make([]*session, 0, len(rl.sessions))
	for _, sess := range rl.sessions {
		sessions = append(sessions, sess)
	}
	rl.mu.Unlock()
	if err := r.Stop(); err != nil {
		t.Fatalf("Serve returned %v", err)
	}
	if tm.Stop() {
		t.Fatal("shutdown left a command timer running")
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	for _, sess := range sessions {
		if sess.expiry != nil || len(sess.pending) != 0 {
			t.Fatalf("shutdown left session timers: expiry %v, %d pending", sess.expiry != nil, len(sess.pending))
		}
	}
}
