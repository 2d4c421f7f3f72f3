package gateway

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/route"
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

// syncBuffer is a log sink a timer may write to while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Issue 10: requests that name no live token used to cost an INFO line
// each, so 58,000 guesses in 20 s rotated the whole log away. Now 10,000
// of them cost the first few lines and a summary with the count; the
// lines name neither the guessed token nor the path; a request with a
// live token still gets its own line (at debug level unless it failed).
func TestUnauthenticatedFailuresAreSummarized(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out syncBuffer
		table := &route.TokenTable{}
		sess := newSession(t, t.TempDir(), route.Permissions{}, "a")
		table.Add(sess)
		g := New(Options{Sessions: table, Kernel: kernel.New(kernel.Options{}), Port: 8080,
			Logger: slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		get := func(target string) int {
			r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080"+target, nil)
			w := httptest.NewRecorder()
			g.ServeHTTP(w, r)
			return w.Code
		}
		for i := range 10_000 {
			if code := get(fmt.Sprintf("/v0/guess%06d/r?path=x", i)); code != http.StatusNotFound {
				t.Fatalf("guess %d: %d", i, code)
			}
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(UnauthLogPeriod)
		synctest.Wait() // a summary due now has been written
		logs := out.String()
		lines := strings.Split(strings.TrimSpace(logs), "\n")
		if len(lines) > UnauthLogBurst+1 {
			t.Fatalf("10,000 unknown tokens wrote %d lines, want at most %d:\n%.2000s", len(lines), UnauthLogBurst+1, logs)
		}
		if last := lines[len(lines)-1]; !strings.Contains(last, fmt.Sprintf("suppressed=%d", 10_000-UnauthLogBurst)) || !strings.Contains(last, "status=404") {
			t.Fatalf("no summary with the count: %q", last)
		}
		if strings.Contains(logs, "guess") || strings.Contains(logs, "path=x") {
			t.Fatalf("a guessed token or path reached the log:\n%s", logs)
		}

		before := strings.Count(out.String(), "\n")
		for range UnauthLogBurst + 1 {
			get("/v0/" + sess.tokens[route.CapRead] + "/nosuchroute")
		}
		if got := strings.Count(out.String(), "\n"); got != before+UnauthLogBurst+1 {
			t.Fatalf("%d requests with a live token wrote %d lines, want one each", UnauthLogBurst+1, got-before)
		}
	})
}
