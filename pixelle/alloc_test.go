package pixelle

import (
	"encoding/json"
	"log/slog"
	"regexp"
	"strconv"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub/ws"
	"github.com/hubdev/hub/internal/race"
)

// routeFixture is a relay with one session whose browser and agent are
// authenticated, for driving the routing functions directly: nothing is
// flushed, so their sockets are never written.
func routeFixture(t *testing.T) (rl *relay, agent, browser *conn) {
	t.Helper()
	s := New(&Config{Website: website})
	rl = newRelay(s, &adapters.Env{Log: slog.New(slog.DiscardHandler)}, DefaultPort, &ws.Sockets{})
	sess := newSession("sid", "s1", "btok", website)
	sess.agentToken = "atok"
	rl.sessions[sess.id] = sess
	browser = &conn{rl: rl, label: "c1", authed: true, role: "browser", sess: sess, told: true}
	agent = &conn{rl: rl, label: "c2", authed: true, role: "agent", sess: sess, told: true}
	sess.browser = browser
	sess.agents[agent] = struct{}{}
	return rl, agent, browser
}

// Routing one command to the browser and its result back queues both
// frames with only the allocations the frames and the pending entry need:
// no closure per queued frame, no fmt for the relay id, no json.Marshal of
// a string that needs no escapes.
func TestCommandRoutingAllocs(t *testing.T) {
	rl, agent, browser := routeFixture(t)
	cmd, err := parseMessage([]byte(`{"type":"command","id":"c1","command":{"method":"state.read"}}`))
	if err != nil {
		t.Fatal(err)
	}
	res := &message{Type: "result", Result: json.RawMessage(`{"ok":true}`)}
	allocs := testing.AllocsPerRun(100, func() {
		var o outbox
		rl.mu.Lock()
		agent.agentMessageLocked(cmd, &o)
		var id string
		for id = range agent.sess.pending {
		}
		res.ID = id
		browser.browserMessageLocked(res, &o)
		rl.mu.Unlock()
		if o.n != 2 {
			t.Fatalf("queued %d actions, want 2", o.n)
		}
	})
	// The relay id, the command frame, the pending entry, its timer (the
	// timer, its callback's closure and the guard's wrapper) and the result
	// frame; a second action in one outbox takes its slice.
	t.Logf("%v allocations per command and result", allocs)
	const want = 8
	if !race.Enabled && allocs > want {
		t.Fatalf("%v allocations to route a command and its result, want at most %d", allocs, want)
	}
}

// The relay id keeps its shape, "r<n>-" and 8 upper-case hex digits, and
// the command frame quotes it as json.Marshal does (escaping anything
// else, should an id ever hold it).
func TestRelayIDAndCommandFrame(t *testing.T) {
	shape := regexp.MustCompile(`^r([0-9]+)-[0-9A-F]{8}$`)
	seen := map[string]bool{}
	for _, n := range []uint64{1, 9, 10, 12345, 1<<64 - 1} {
		id := newRelayID(n)
		m := shape.FindStringSubmatch(id)
		if m == nil || m[1] != strconv.FormatUint(n, 10) {
			t.Fatalf("newRelayID(%d) = %q", n, id)
		}
		if seen[id[len(id)-8:]] {
			t.Fatalf("repeated randomness in %q", id)
		}
		seen[id[len(id)-8:]] = true
	}
	cmd := json.RawMessage(`{"method":"state.read"}`)
	for _, id := range []string{newRelayID(7), `odd"id\` + "\u2028<", ""} {
		q, _ := json.Marshal(id)
		want := `{"type":"command","id":` + string(q) + `,"command":` + string(cmd) + `,"actor":"agent"}`
		if got := string(commandFrame(id, cmd)); got != want {
			t.Fatalf("commandFrame(%q) = %s, want %s", id, got, want)
		}
	}
}
