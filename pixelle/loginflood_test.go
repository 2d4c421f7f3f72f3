package pixelle

import (
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// A local process guessing credentials as fast as it can: 10,000 failed
// logins of every kind (a wrong browser token, a wrong agent token, a
// first frame that is no hello, one that is no JSON) cost a handful of
// log lines — the first few of each kind in full, then one summary per
// minute saying how many more there were — instead of a line each, which
// would rotate the whole log away; a summary still due when the relay
// stops is written then. Every failure is counted, and an honest login
// is logged as always.
func TestFailedLoginsAreThinned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out adaptertest.SyncBuffer
		r := newBubbleRelayLog(t, slog.New(slog.NewTextHandler(&out, nil)))
		stopped := false
		defer func() {
			if !stopped {
				r.stop()
			}
		}()
		id, tok, err := r.rl.newSession(website)
		if err != nil {
			t.Fatal(err)
		}
		out.TakeLines() // the session's line
		kinds := []struct {
			msg, origin, frame string
		}{
			{"browser authentication failed", website, `{"type":"hello","role":"browser","sessionId":"` + id + `","token":"guess"}`},
			{"agent authentication failed", "", `{"type":"hello","role":"agent","sessionId":"` + id + `","token":"guess"}`},
			{"first message is not a valid hello", "", `{"type":"command","id":"1"}`},
			{"malformed JSON", "", `{"type":`},
		}
		// Each attempt also costs the relay's close of its socket.
		const closed = "connection closed by the relay"
		const attempts = 10_000
		flood := func(n int) {
			for i := range n {
				k := kinds[i%len(kinds)]
				c, err := adaptertest.DialPipe(r.ep, "/relay", adaptertest.DialOptions{Origin: k.origin})
				if err != nil {
					t.Fatal(err)
				}
				if err := c.SendText(k.frame); err != nil {
					t.Fatal(err)
				}
				<-c.Closed()
				if code, _ := c.CloseCode(); code != closePolicy {
					t.Fatalf("attempt %d (%s): closed with %d, want %d", i, k.msg, code, closePolicy)
				}
				c.Close()
				time.Sleep(2 * time.Millisecond) // 20 s of guessing
			}
			synctest.Wait()
		}
		// counted checks lines: at most burst+summaries lines per kind,
		// and every failure either logged in full or counted in a summary.
		counted := func(lines []string, want int) {
			t.Helper()
			msgs := []string{closed}
			for _, k := range kinds {
				msgs = append(msgs, k.msg)
			}
			for _, msg := range msgs {
				n := want
				if msg == closed {
					n = want * len(kinds)
				}
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
				if full > FailedLoginLogBurst {
					t.Errorf("%s: %d lines in full, want at most %d", msg, full, FailedLoginLogBurst)
				}
				if full+summed != n {
					t.Errorf("%s: %d in full and %d in summaries, want %d in all", msg, full, summed, n)
				}
			}
		}

		flood(attempts)
		time.Sleep(FailedLoginLogPeriod)
		synctest.Wait() // the summaries due have been written
		lines := out.TakeLines()
		if max := (FailedLoginLogBurst + 1) * (len(kinds) + 1); len(lines) > max {
			t.Fatalf("%d failed logins in 20 s cost %d log lines, want at most %d:\n%s", attempts, len(lines), max, strings.Join(lines, "\n"))
		}
		counted(lines, attempts/len(kinds))
		t.Logf("%d failed logins: %d log lines", attempts, len(lines))

		// An honest login is logged as always.
		r.browser(t, id, tok)
		if lines := out.TakeLines(); len(lines) != 1 || !strings.Contains(lines[0], "authenticated") {
			t.Fatalf("an honest login logged %q", lines)
		}

		// A flood the relay stops during: its summaries are not lost.
		flood(4 * 100)
		r.stop()
		stopped = true
		lines = out.TakeLines()
		var summaries int
		for _, l := range lines {
			if strings.Contains(l, "suppressed=") {
				summaries++
			}
		}
		if summaries != len(kinds)+1 {
			t.Fatalf("stopping mid-flood wrote %d summaries, want one per kind:\n%s", summaries, strings.Join(lines, "\n"))
		}
		counted(lines, 100)
	})
}
