package stitchslop

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
)

// A local process (or a page) refused at the upgrade as fast as the
// loopback carries it, with a new Origin or Host on every request: each
// one used to be a kind of its own in the refusal log, so "the first of
// each kind is always logged" gave it a log line per request, enough to
// rotate the log away. 10,000 such refusals now cost a handful of lines —
// the first few of each reason in full, then one summary a minute with
// the number left out — while the refusal log still counts every one, and
// a summary still due when the bridge stops is written then.
func TestRefusalFloodWithFreshDetailsIsThinned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := New(&Config{Origin: testOrigin, Token: testToken})
		if err != nil {
			t.Fatal(err)
		}
		var out adaptertest.SyncBuffer
		r := newRun(s, &adapters.Env{Log: slog.New(slog.NewTextHandler(&out, nil))}, runPlace{dir: t.TempDir(), port: 8787})
		refuse := func(i int) {
			req := httptest.NewRequest("GET", "http://127.0.0.1:8787/", nil)
			req.Header.Set("Upgrade", "websocket")
			req.Header.Set("Origin", testOrigin)
			if i%2 == 0 {
				req.Header.Set("Origin", "https://guess-"+strconv.Itoa(i)+".example")
			} else {
				req.Host = "guess-" + strconv.Itoa(i) + ".example:8787"
			}
			w := httptest.NewRecorder()
			r.serveUpgrade(w, req)
			if w.Code != http.StatusForbidden {
				t.Fatalf("request %d: %d, want 403", i, w.Code)
			}
		}
		msgs := []string{"refused page upgrade: origin mismatch", "refused page upgrade: Host is not this loopback bridge"}
		counted := func(lines []string, want int) {
			t.Helper()
			for _, msg := range msgs {
				full, summed := 0, 0
				for _, l := range lines {
					if !strings.Contains(l, msg) {
						continue
					}
					if _, n, ok := strings.Cut(l, "suppressed="); ok {
						n, _, _ = strings.Cut(n, " ")
						v, err := strconv.Atoi(n)
						if err != nil {
							t.Fatalf("summary %q", l)
						}
						summed += v
					} else {
						full++
					}
				}
				if full > RefusalLogBurst {
					t.Errorf("%s: %d lines in full, want at most %d", msg, full, RefusalLogBurst)
				}
				if full+summed != want {
					t.Errorf("%s: %d in full and %d in summaries, want %d in all", msg, full, summed, want)
				}
			}
		}

		const n = 10_000
		for i := range n {
			refuse(i)
			time.Sleep(2 * time.Millisecond) // 20 s of them
		}
		time.Sleep(RefusalLogPeriod)
		synctest.Wait() // the summaries due have been written
		lines := out.TakeLines()
		if max := (RefusalLogBurst + 1) * len(msgs); len(lines) > max {
			t.Fatalf("%d refusals in 20 s cost %d log lines, want at most %d:\n%s", n, len(lines), max, strings.Join(lines, "\n"))
		}
		counted(lines, n/2)
		t.Logf("%d refusals: %d log lines", n, len(lines))
		if attempts, _ := r.refusals.snapshot(); attempts != n {
			t.Errorf("%d attempts counted, want %d", attempts, n)
		}

		// A flood the bridge stops during: its summaries are not lost.
		for i := range 200 {
			refuse(i)
		}
		r.refusals.flush()
		lines = out.TakeLines()
		counted(lines, 100)
	})
}
