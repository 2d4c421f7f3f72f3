package pixelle

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
)

func toolErr(t *testing.T, err error) *adapters.ToolError {
	t.Helper()
	var te *adapters.ToolError
	if !errors.As(err, &te) {
		t.Fatalf("not a ToolError: %v", err)
	}
	return te
}

// bridgeCall runs BridgeCall in the background; the browser answers.
func bridgeCall(r *testRelay, tool, args string) <-chan callOut {
	ch := make(chan callOut, 1)
	go func() {
		out, err := r.s.BridgeCall(context.Background(), tool, json.RawMessage(args))
		ch <- callOut{out, err}
	}()
	return ch
}

type callOut struct {
	out json.RawMessage
	err error
}

// bridgePair pairs the in-process agent with the canvas b shows the code of.
func bridgePair(t *testing.T, r *testRelay, b *adaptertest.WSClient) {
	t.Helper()
	if _, err := r.s.BridgeCall(context.Background(), "pair", json.RawMessage(`{"code":"`+code(t, b)+`"}`)); err != nil {
		t.Fatal(err)
	}
	if m := next(t, b); m["type"] != "paired" {
		t.Fatalf("browser got %v, want paired", m)
	}
}

func recv(t *testing.T, ch <-chan callOut) callOut {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(wait):
		t.Fatal("the bridge call did not return")
	}
	return callOut{}
}

// From no browser, to an unpaired one (only pair is offered), to a paired
// one the in-process agent drives; a pair code is taken like POST
// /api/pair's and replaces the session's earlier agents.
func TestBridgeOfflineUnpairedPaired(t *testing.T) {
	r := startRelay(t, nil)
	for _, err := range []error{
		func() error { _, err := r.s.BridgeTools(); return err }(),
		func() error { _, err := r.s.BridgeClassify("state.read", json.RawMessage(`{}`)); return err }(),
		func() error {
			_, err := r.s.BridgeClassify("pair", json.RawMessage(`{"code":"00112233AABB"}`))
			return err
		}(),
		func() error {
			_, err := r.s.BridgeCall(context.Background(), "state.read", json.RawMessage(`{}`))
			return err
		}(),
	} {
		if te := toolErr(t, err); te.Code != adapters.CodeBrowserOffline || !errors.Is(err, adapters.ErrNoPage) || !te.Retryable {
			t.Fatalf("offline: %v", err)
		}
	}
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	if tools, err := r.s.BridgeTools(); err != nil || len(tools) != 1 || tools[0].Name != "pair" || tools[0].Read {
		t.Fatalf("unpaired: %+v %v", tools, err)
	}
	if _, err := r.s.BridgeClassify("state.read", json.RawMessage(`{}`)); toolErr(t, err).Code != codeNotPaired {
		t.Fatal(err)
	}
	if read, err := r.s.BridgeClassify("pair", json.RawMessage(`{"code":"00112233aabb"}`)); read || err != nil {
		t.Fatal(read, err)
	}
	if _, err := r.s.BridgeCall(context.Background(), "pair", json.RawMessage(`{"code":"00112233AABB"}`)); toolErr(t, err).Code != "INVALID_OR_EXPIRED_CODE" {
		t.Fatal(err)
	}
	out, err := r.s.BridgeCall(context.Background(), "pair", json.RawMessage(`{"code":" `+strings.ToLower(code(t, b))+`"}`))
	if err != nil || !strings.Contains(string(out), `"paired":true`) || strings.Contains(string(out), "token") {
		t.Fatalf("%s %v", out, err)
	}
	if m := next(t, b); m["type"] != "paired" {
		t.Fatal(m)
	}
	if tools, err := r.s.BridgeTools(); err != nil || len(tools) != len(bridgeTools) {
		t.Fatalf("paired: %d %v", len(tools), err)
	}
	call := bridgeCall(r, "state.read", `{}`)
	m := next(t, b)
	if m["type"] != "command" || m["actor"] != "agent" || string(mustJSON(m["command"])) != `{"method":"state.read"}` {
		t.Fatal(m)
	}
	sendJSON(t, b, map[string]any{"type": "result", "id": m["id"], "result": map[string]any{"title": "Example", "revision": 4}})
	if c := recv(t, call); c.err != nil || string(c.out) != `{"revision":4,"title":"Example"}` {
		t.Fatalf("%s %v", c.out, c.err)
	}
}

func TestBridgeClassify(t *testing.T) {
	r := startRelay(t, nil)
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	bridgePair(t, r, b)
	for _, tc := range []struct {
		tool, args string
		read       bool
		code       string
	}{
		{"state.read", `{}`, true, ""},
		{"selection.read", `{}`, true, ""},
		{"events.read", `{}`, true, ""},
		{"project.export", `{}`, true, ""},
		{"nodes.read", `{"params":{"ids":["brief"]}}`, true, ""},
		{"nodes.upsert", `{"expectedRevision":0,"params":{"nodes":[{"id":"a","kind":"note","title":"A","content":"x"}]}}`, false, ""},
		{"nodes.delete", `{"expectedRevision":3,"operationId":"del-1","params":{"ids":["a"]}}`, false, ""},
		{"selection.set", `{"expectedRevision":3,"params":{"ids":[]}}`, false, ""},
		{"viewport.focus", `{"expectedRevision":3,"params":{"ids":["a"]}}`, false, ""},
		{"state.read", `{"method":"state.read"}`, true, ""},
		{"state.read", `{"method":"nodes.delete"}`, false, codeInvalid},
		{"state.read", `{"operationId":"x"}`, false, codeInvalid}, // reads take none
		{"nodes.delete", `{"params":{"ids":["a"]}}`, false, codeInvalid},
		{"nodes.delete", `{"expectedRevision":1,"operationId":"bad id!","params":{"ids":["a"]}}`, false, codeInvalid},
		{"nodes.read", `[]`, false, codeInvalid},
		{"project.import", `{}`, false, codeNotAllowed},
		{"canvas.wipe", `{}`, false, codeUnknownMethod},
		{"pair", `{}`, false, codeInvalid},
		{"pair", `{"code":"nope"}`, false, codeInvalid},
	} {
		read, err := r.s.BridgeClassify(tc.tool, json.RawMessage(tc.args))
		if read != tc.read || (tc.code == "") != (err == nil) || err != nil && toolErr(t, err).Code != tc.code {
			t.Errorf("%s %s: %v %v", tc.tool, tc.args, read, err)
		}
	}
}

// A mutation without an operationId carries one derived from its
// arguments, the same for the same intent; the browser's answers, errors
// included, come back unchanged.
func TestBridgeMutationsAndErrors(t *testing.T) {
	r := startRelay(t, func(s *Server) { s.CommandTimeout = 300 * time.Millisecond })
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	bridgePair(t, r, b)

	send := func(tool, args string) (map[string]any, <-chan callOut) {
		t.Helper()
		ch := bridgeCall(r, tool, args)
		m := next(t, b)
		cmd, _ := m["command"].(map[string]any)
		return map[string]any{"id": m["id"], "command": cmd}, ch
	}
	answer := func(m map[string]any, v map[string]any) {
		v["type"], v["id"] = "result", m["id"]
		sendJSON(t, b, v)
	}
	upsert := `{"params":{"nodes":[{"id":"a","kind":"note","title":"A","content":"x"}]},"expectedRevision":0}`
	m1, c1 := send("nodes.upsert", upsert)
	op1, _ := m1["command"].(map[string]any)["operationId"].(string)
	if !strings.HasPrefix(op1, "op-") || len(op1) != 35 || m1["command"].(map[string]any)["expectedRevision"] != float64(0) {
		t.Fatal(m1)
	}
	answer(m1, map[string]any{"result": map[string]any{"revision": 1, "affected": []string{"a"}, "operationId": op1}})
	if c := recv(t, c1); c.err != nil || !strings.Contains(string(c.out), op1) {
		t.Fatal(c)
	}
	for _, tc := range []struct {
		args string
		same bool
	}{
		{`{"expectedRevision":0,"params":{"nodes":[{"content":"x","title":"A","kind":"note","id":"a"}]}}`, true}, // another key order
		{`{"expectedRevision":1,"params":{"nodes":[{"id":"a","kind":"note","title":"A","content":"x"}]}}`, false},
		{`{"expectedRevision":0,"params":{"nodes":[{"id":"a","kind":"note","title":"B","content":"x"}]}}`, false},
	} {
		m, c := send("nodes.upsert", tc.args)
		op := m["command"].(map[string]any)["operationId"]
		if (op == op1) != tc.same {
			t.Errorf("%s: %v vs %s", tc.args, op, op1)
		}
		answer(m, map[string]any{"result": map[string]any{"revision": 1, "replayed": true}})
		recv(t, c)
	}
	m, c := send("nodes.delete", `{"expectedRevision":1,"operationId":"mine-1","params":{"ids":["a"]}}`)
	if m["command"].(map[string]any)["operationId"] != "mine-1" {
		t.Fatal(m)
	}
	answer(m, map[string]any{"error": map[string]any{"code": "REVISION_CONFLICT", "message": "Read state and rebase.", "currentRevision": 7}})
	te := toolErr(t, recv(t, c).err)
	if te.Code != "REVISION_CONFLICT" || te.Retryable || te.Message != `{"code":"REVISION_CONFLICT","currentRevision":7,"message":"Read state and rebase."}` || te.Hint == "" {
		t.Fatalf("%+v", te)
	}
	// No answer in time, and a browser that leaves mid-command: the
	// outcome is unknown, and a retry (same operationId) is the remedy.
	_, c = send("selection.set", `{"expectedRevision":1,"params":{"ids":["a"]}}`)
	if te := toolErr(t, recv(t, c).err); te.Code != "OUTCOME_UNKNOWN" || !te.Retryable || !strings.Contains(te.Message, "no result from the browser in time") {
		t.Fatalf("%+v", te)
	}
	_, c = send("viewport.focus", `{"expectedRevision":1,"params":{"ids":["a"]}}`)
	b.Close()
	if te := toolErr(t, recv(t, c).err); te.Code != "OUTCOME_UNKNOWN" || !te.Retryable {
		t.Fatalf("%+v", te)
	}
	adaptertest.WaitFor(t, "the browser gone", func() bool { _, err := r.s.BridgeTools(); return errors.Is(err, adapters.ErrNoPage) })
}

// The in-process agent drives the canvas it paired with, and only that
// one: not a canvas an outside agent paired with, however recently it
// attached; and its pairing ends when anyone pairs that canvas again.
func TestBridgeDrivesOnlyTheCanvasItPaired(t *testing.T) {
	r := startRelay(t, nil)
	id, tok := r.createSession(t)
	mine := r.browser(t, id, tok)
	bridgePair(t, r, mine)
	other := r.paired(t) // paired by an outside agent, attached later
	ask := func(b *adaptertest.WSClient, title string) {
		t.Helper()
		ch := bridgeCall(r, "state.read", `{}`)
		m := next(t, b)
		sendJSON(t, b, map[string]any{"type": "result", "id": m["id"], "result": map[string]any{"title": title}})
		if c := recv(t, ch); c.err != nil || !strings.Contains(string(c.out), title) {
			t.Fatal(c)
		}
	}
	ask(mine, "mine")
	quiet(t, other.b)

	// Its canvas reconnects after the other one did: still its canvas.
	mine.Close()
	adaptertest.WaitFor(t, "mine detached", func() bool { r.run().mu.Lock(); defer r.run().mu.Unlock(); return r.run().sessions[id].browser == nil })
	if _, err := r.s.BridgeCall(context.Background(), "state.read", json.RawMessage(`{}`)); !errors.Is(err, adapters.ErrNoPage) {
		t.Fatalf("its canvas offline, the other online: %v", err)
	}
	quiet(t, other.b)
	mine = r.browser(t, id, tok)
	ask(mine, "mine again")

	// An outside agent pairs with its canvas: that replaces it.
	r.pair(t, code(t, mine))
	next(t, mine) // paired
	if _, err := r.s.BridgeCall(context.Background(), "state.read", json.RawMessage(`{}`)); toolErr(t, err).Code != codeNotPaired {
		t.Fatalf("after an outside agent paired its canvas: %v", err)
	}
	quiet(t, other.b)
	quiet(t, mine)
}

// A caller that gives up leaves nothing pending behind.
func TestBridgeCallerGivesUp(t *testing.T) {
	r := startRelay(t, nil)
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	bridgePair(t, r, b)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := r.s.BridgeCall(ctx, "nodes.delete", json.RawMessage(`{"expectedRevision":1,"params":{"ids":["a"]}}`))
		errc <- err
	}()
	next(t, b)
	cancel()
	if te := toolErr(t, <-errc); te.Code != "OUTCOME_UNKNOWN" || !te.Retryable {
		t.Fatalf("%+v", te)
	}
	r.run().mu.Lock()
	n := len(r.run().sessions[id].pending)
	r.run().mu.Unlock()
	if n != 0 {
		t.Fatalf("%d commands still pending", n)
	}
}
