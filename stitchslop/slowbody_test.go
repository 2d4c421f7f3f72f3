package stitchslop

import (
	"net/http"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

var slowPace = hub.BodyPace{Base: 200 * time.Millisecond, MinRate: 1 << 30}

// TestSlowControlBodyIsCutOff: a keyed control request whose body
// trickles is cut off at its deadline (issue 15 row 5).
func TestSlowControlBodyIsCutOff(t *testing.T) {
	b := startBridge(t, nil, adaptertest.Options{BodyPace: slowPace})
	const n = 200
	res := adaptertest.Trickle(t, b.Addr(), "POST", "/call", http.Header{KeyHeader: {b.S.Key()}}, n, 50*time.Millisecond)
	if !res.Cut || res.Sent >= n {
		t.Fatalf("%+v, want the body cut off", res)
	}
}

// TestWaitLongPollOutlivesTheBodyDeadline: POST /wait reads its small body
// and then holds the request far longer than a body deadline (up to
// 600 s in real use); the deadline ends with the body, so the poll runs to
// its own timeout.
func TestWaitLongPollOutlivesTheBodyDeadline(t *testing.T) {
	b := startBridge(t, nil, adaptertest.Options{BodyPace: slowPace})
	w := mustJSON(t, b.control("POST", "/wait", `{"seconds":1}`).Body)
	if w["error"] != "timeout" {
		t.Fatalf("/wait = %v, want its own timeout after a second", w)
	}
}
