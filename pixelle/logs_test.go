package pixelle

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// TestSecretsNeverLogged runs a full session — create, pair, route, revoke,
// failed auth — with a logger the test can read, and checks that no session
// id, token or pairing code appears in it. (The harness logs into t.Log,
// which a test cannot read back, so this one runs Serve directly.)
func TestSecretsNeverLogged(t *testing.T) {
	var logs logBuffer
	s, err := New(website, 0)
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan int, 1)
	env := &adapters.Env{
		Log:       slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Dirs:      adaptertest.TempDirs(t),
		Lifecycle: hub.NewLifecycle(hub.IdleRules{}),
		Ready:     func(p ...int) { ready <- p[0] },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, env) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	select {
	case <-ready:
	case <-time.After(wait):
		t.Fatal("not ready")
	}
	r := &relay{Harness: &adaptertest.Harness{T: t, Ports: []int{s.port}}, s: s}
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	c := code(t, b)
	res := r.pair(t, c)
	next(t, b)
	a := r.agent(t, res.SessionID, res.Token)
	a.SendText(cmdMsg("c1", `{"method":"state.read"}`))
	next(t, b)
	bad := r.dial(t, "", map[string]string{"type": "hello", "role": "agent", "sessionId": id, "token": tok})
	closedWith(t, bad, 1008)
	sendJSON(t, b, map[string]string{"type": "revoke"})
	closedWith(t, a, 1008)
	b.Close()
	a.Close()
	out := logs.String()
	if !strings.Contains(out, "agent paired") {
		t.Fatalf("logs look empty: %s", out)
	}
	for name, secret := range map[string]string{"session id": id, "browser token": tok, "agent token": res.Token, "pairing code": c} {
		if strings.Contains(out, secret) {
			t.Errorf("%s appears in the logs", name)
		}
	}
}
