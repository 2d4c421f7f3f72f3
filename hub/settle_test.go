package hub

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		n := 0
		if !Settle(t.Context(), 50*time.Millisecond, 3*time.Second, func() bool { n++; return n == 3 }) {
			t.Fatal("Settle gave up before try succeeded")
		}
		if d := time.Since(start); d != 150*time.Millisecond {
			t.Fatalf("succeeded after %v, want three polls (150ms)", d)
		}
		start = time.Now()
		if Settle(t.Context(), 50*time.Millisecond, 3*time.Second, func() bool { return false }) {
			t.Fatal("Settle reported success for a try that never succeeds")
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Fatalf("gave up after %v, want 3s", d)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if Settle(ctx, 50*time.Millisecond, 3*time.Second, func() bool { return true }) {
			t.Fatal("Settle tried after its context ended")
		}
	})
}
