package pixelle

import (
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// TestSecretsNeverLogged runs a full session — create, pair, route, revoke,
// failed auth — and checks that no session id, token or pairing code
// appears in anything the relay logged.
func TestSecretsNeverLogged(t *testing.T) {
	s := New(&Config{Website: website})
	r := &testRelay{Harness: adaptertest.Start(t, s, adaptertest.Options{}), s: s}
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
	out := r.Logs()
	if !strings.Contains(out, "agent paired") {
		t.Fatalf("logs look empty: %s", out)
	}
	for name, secret := range map[string]string{"session id": id, "browser token": tok, "agent token": res.Token, "pairing code": c} {
		if strings.Contains(out, secret) {
			t.Errorf("%s appears in the logs", name)
		}
	}
}
