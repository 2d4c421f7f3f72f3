package stitchslop

import (
	"errors"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
)

// Shell calls still pending when the bridge stops are told so: the one on
// the wire may have run, the one queued behind it was never sent. Neither
// caller gave up, and the queued request was not a bad request.
func TestCallsPendingWhenTheBridgeStopsSaySo(t *testing.T) {
	b := startBridge(t, nil)
	p, _ := b.attach(map[string]any{"token": testToken})
	sent, queued := make(chan adaptertest.Response, 1), make(chan adaptertest.Response, 1)
	go func() { sent <- b.control("POST", "/call", `{"command":"sent"}`) }()
	p.next()
	go func() { queued <- b.control("POST", "/call", `{"command":"queued"}`) }()
	waitGoroutinesIn(t, "stitchslop.(*run).Call(", 2)
	b.Stop()

	a := <-sent
	env := mustJSON(t, a.Body)
	if a.Status != 200 || env["error"] != "uncertain" || contains(env["message"].(string), "gave up") || !contains(env["message"].(string), "stopp") {
		t.Errorf("the sent call: %d %s; want 200, uncertain, saying the bridge stopped", a.Status, a.Body)
	}
	q := <-queued
	env = mustJSON(t, q.Body)
	if q.Status != 200 || env["ok"] != false || env["error"] != "stopping" || !contains(env["message"].(string), "not sent") {
		t.Errorf("the queued call: %d %s; want 200, error stopping, saying it was not sent", q.Status, q.Body)
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
