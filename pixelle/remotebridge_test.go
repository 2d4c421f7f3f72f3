package pixelle

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// A relay run in another process, driven as a ToolBridge: directly
// (RemoteBridge, as `hub geturl serve` drives the hub's relay) and through
// the hub's adapter reusing it. Only pair is offered until a pairing is
// stored; pair stores it where `hub pixelle call` finds it; commands reach
// the canvas and come back unchanged, the browser's errors as its codes;
// an absent canvas is offline and a stopped relay not running.
func TestRemoteBridge(t *testing.T) {
	for _, mode := range []string{"remote", "following"} {
		t.Run(mode, func(t *testing.T) {
			r := startRelay(t, nil)
			relayURL := "http://" + hub.LoopbackHost + ":" + strconv.Itoa(r.Port())
			agentDirs := adaptertest.TempDirs(t)
			var tb adapters.ToolBridge = NewRemoteBridge(agentDirs, relayURL)
			if mode == "following" {
				s := New(&Config{Website: website, Port: r.Port()})
				s.FollowOutside = true
				adaptertest.Start(t, s, adaptertest.Options{Dirs: &agentDirs})
				if s.followed() == nil {
					t.Fatalf("the hub's adapter does not reuse the relay: %+v", s.Status())
				}
				tb = s
			}

			if tools, err := tb.BridgeTools(); err != nil || len(tools) != 1 || tools[0].Name != toolPair {
				t.Fatalf("unpaired: %+v %v", tools, err)
			}
			if _, err := tb.BridgeClassify("state.read", json.RawMessage(`{}`)); toolErr(t, err).Code != codeNotPaired {
				t.Fatal(err)
			}
			if _, err := tb.BridgeCall(context.Background(), "state.read", json.RawMessage(`{}`)); toolErr(t, err).Code != codeNotPaired {
				t.Fatal(err)
			}

			id, tok := r.createSession(t)
			b := r.browser(t, id, tok)
			if _, err := tb.BridgeCall(context.Background(), "pair", json.RawMessage(`{"code":"00112233AABB"}`)); toolErr(t, err).Code != "INVALID_OR_EXPIRED_CODE" {
				t.Fatal(err)
			}
			out, err := tb.BridgeCall(context.Background(), "pair", json.RawMessage(`{"code":"`+code(t, b)+`"}`))
			if err != nil || string(out) != `{"paired":true,"relay":"`+relayURL+`"}` {
				t.Fatalf("pair: %s %v", out, err)
			}
			if m := next(t, b); m["type"] != "paired" {
				t.Fatal(m)
			}
			if cr, err := NewCredentialStore(agentDirs).Load(); err != nil || cr.SessionID != id {
				t.Fatalf("the pairing is not stored for the shell client: %+v %v", cr, err)
			}
			if tools, err := tb.BridgeTools(); err != nil || len(tools) != len(bridgeTools) {
				t.Fatalf("paired: %d %v", len(tools), err)
			}
			if read, err := tb.BridgeClassify("nodes.delete", json.RawMessage(`{"expectedRevision":1,"params":{"ids":["a"]}}`)); read || err != nil {
				t.Fatal(read, err)
			}

			ch := make(chan callOut, 1)
			go func() {
				out, err := tb.BridgeCall(context.Background(), "state.read", json.RawMessage(`{}`))
				ch <- callOut{out, err}
			}()
			m := next(t, b)
			if m["type"] != "command" || string(mustJSON(m["command"])) != `{"method":"state.read"}` {
				t.Fatal(m)
			}
			sendJSON(t, b, map[string]any{"type": "result", "id": m["id"], "result": map[string]any{"revision": 4}})
			if c := recv(t, ch); c.err != nil || string(c.out) != `{"revision":4}` {
				t.Fatalf("%s %v", c.out, c.err)
			}

			go func() {
				out, err := tb.BridgeCall(context.Background(), "nodes.delete", json.RawMessage(`{"expectedRevision":1,"params":{"ids":["a"]}}`))
				ch <- callOut{out, err}
			}()
			m = next(t, b)
			sendJSON(t, b, map[string]any{"type": "result", "id": m["id"], "error": map[string]any{"code": "REVISION_CONFLICT", "message": "now 4"}})
			if te := toolErr(t, recv(t, ch).err); te.Code != "REVISION_CONFLICT" || te.Hint == "" {
				t.Fatalf("%+v", te)
			}

			b.Close()
			adaptertest.WaitFor(t, "the canvas to leave", func() bool { return !r.browserAttached(id) })
			_, err = tb.BridgeCall(context.Background(), "state.read", json.RawMessage(`{}`))
			if te := toolErr(t, err); te.Code != adapters.CodeBrowserOffline || !errors.Is(err, adapters.ErrNoPage) {
				t.Fatalf("offline: %v", err)
			}

			if mode == "remote" {
				if err := r.Stop(); err != nil {
					t.Fatal(err)
				}
				_, err1 := tb.BridgeTools()
				_, err2 := tb.BridgeCall(context.Background(), "state.read", json.RawMessage(`{}`))
				for _, err := range []error{err1, err2} {
					if te := toolErr(t, err); te.Code != adapters.CodeNotRunning || !te.Retryable {
						t.Fatalf("stopped: %+v", te)
					}
				}
			}
		})
	}
}
