package gateway

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"
)

// TestLogRequestOffCostsNothing: with debug off (the usual level), a
// successful request's log line is neither built nor allocated.
func TestLogRequestOffCostsNothing(t *testing.T) {
	g := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	r, _ := http.NewRequest("GET", "http://127.0.0.1/v0/x/r", nil)
	rec := &record{route: "/r", status: 200, bytes: 4711}
	if n := testing.AllocsPerRun(100, func() { g.logRequest(r, rec, time.Millisecond) }); n != 0 {
		t.Fatalf("%v allocations per request with the level off", n)
	}
}
