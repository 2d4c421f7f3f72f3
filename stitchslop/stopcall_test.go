package stitchslop

import (
	"context"
	"errors"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
)

// Shell calls still pending when the bridge stops are told so: both are
// on the wire (commands go side by side), so both may have run. Neither
// caller gave up. A call that reaches a bridge already stopping is never
// sent, and says so.
func TestCallsPendingWhenTheBridgeStopsSaySo(t *testing.T) {
	b := startBridge(t, nil)
	p, _ := b.attach(map[string]any{"token": testToken})
	first, second := make(chan adaptertest.Response, 1), make(chan adaptertest.Response, 1)
	go func() { first <- b.control("POST", "/call", `{"command":"first"}`) }()
	go func() { second <- b.control("POST", "/call", `{"command":"second"}`) }()
	p.next()
	p.next()
	b.Stop()
	for _, ch := range []chan adaptertest.Response{first, second} {
		a := <-ch
		env := mustJSON(t, a.Body)
		if a.Status != 200 || env["error"] != "uncertain" || contains(env["message"].(string), "gave up") || !contains(env["message"].(string), "stopp") {
			t.Errorf("a call on the wire: %d %s; want 200, uncertain, saying the bridge stopped", a.Status, a.Body)
		}
	}

	s, err := New(&Config{Origin: testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	stopping := make(chan struct{})
	close(stopping)
	r := newRun(s, &adapters.Env{}, runPlace{dir: t.TempDir(), stopping: stopping})
	out, err := r.Call(context.Background(), "late", nil)
	env := mustJSON(t, out)
	if err != nil || env["ok"] != false || env["error"] != "stopping" || !contains(env["message"].(string), "not sent") {
		t.Errorf("a call reaching a stopping bridge: %s %v; want error stopping, saying it was not sent", out, err)
	}
}

// Through a ToolBridge (geturl's /k, hub mcp) the queued call's answer is
// a retryable refusal: it was never sent, so nothing ran.
func TestStoppingEnvelopeIsRetryable(t *testing.T) {
	_, err := envelopeAnswer([]byte(`{"ok":false,"error":"stopping","message":"the bridge is stopping: not sent"}`))
	var te *adapters.ToolError
	if !errors.As(err, &te) || te.Code != "stopping" || !te.Retryable || te.Hint != hintStopping {
		t.Fatalf("%#v", err)
	}
}
