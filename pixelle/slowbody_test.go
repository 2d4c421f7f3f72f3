package pixelle

import (
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// TestSlowPairBodyIsCutOff: a native client trickling a POST /api/pair
// body is cut off at its deadline (issue 15 row 5).
func TestSlowPairBodyIsCutOff(t *testing.T) {
	s := New(&Config{Website: website})
	h := adaptertest.Start(t, s, adaptertest.Options{BodyPace: hub.BodyPace{Base: 200 * time.Millisecond, MinRate: 1 << 30}})
	const n = 200
	res := adaptertest.Trickle(t, h.Addr(), "POST", "/api/pair", nil, n, 50*time.Millisecond)
	if !res.Cut || res.Sent >= n {
		t.Fatalf("%+v, want the body cut off", res)
	}
}
