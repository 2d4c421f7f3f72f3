package pixelle

import (
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// fakeClock is an adjustable Server.Now.
type fakeClock struct{ off atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *fakeClock) advance(d time.Duration) { c.off.Add(int64(d)) }

func pairStatus(r *testRelay, body string) (int, string) {
	resp := r.Do(adaptertest.Request{Method: "POST", Path: "/api/pair", Body: []byte(body)})
	return resp.Status, string(resp.Body)
}

func TestPairCreate(t *testing.T) {
	r := startRelay(t, nil)
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	sendJSON(t, b, map[string]string{"type": "pair.create"})
	m := next(t, b)
	c, _ := m["code"].(string)
	if m["type"] != "pair.code" || !regexp.MustCompile(`^[0-9A-F]{12}$`).MatchString(c) {
		t.Fatalf("pair.code %v", m)
	}
	exp := time.UnixMilli(int64(m["expires"].(float64)))
	if d := time.Until(exp); d < 4*time.Minute || d > 5*time.Minute+time.Second {
		t.Fatalf("code expires in %s, want ~5m", d)
	}
	// A fresh code replaces the previous one.
	c2 := code(t, b)
	if c2 == c {
		t.Fatal("same code twice")
	}
	if st, body := pairStatus(r, `{"code":"`+c+`"}`); st != 400 || !strings.Contains(body, `"INVALID_OR_EXPIRED_CODE"`) {
		t.Fatalf("replaced code: %d %s", st, body)
	}
	r.pair(t, c2)
}

func TestPairing(t *testing.T) {
	clock := &fakeClock{}
	r := startRelay(t, func(s *Server) { s.Now = clock.now })
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)

	// Lower-case ASCII hex is normalised to upper case.
	c := code(t, b)
	res := r.pair(t, strings.ToLower(c))
	if res.SessionID != id || res.URL != r.URL("") || len(res.Token) < 32 || res.Token == tok {
		t.Fatalf("pair result %+v", res)
	}
	if m := next(t, b); m["type"] != "paired" {
		t.Fatalf("browser got %v", m)
	}
	// Used codes fail, with exactly the contract's body.
	if st, body := pairStatus(r, `{"code":"`+c+`"}`); st != 400 || strings.TrimSpace(body) != `{"error":"INVALID_OR_EXPIRED_CODE"}` {
		t.Fatalf("reused code: %d %s", st, body)
	}
	a1 := r.agent(t, res.SessionID, res.Token)
	// ready reports paired for the browser too after reconnecting.
	// Re-pairing issues a new token and closes earlier agents.
	res2 := r.pair(t, code(t, b))
	next(t, b) // paired
	closedWith(t, a1, 1008)
	if res2.Token == res.Token {
		t.Fatal("agent token reused")
	}
	old := r.dial(t, "", map[string]string{"type": "hello", "role": "agent", "sessionId": id, "token": res.Token})
	closedWith(t, old, 1008)
	r.agent(t, id, res2.Token)

	// Expired codes fail.
	c = code(t, b)
	clock.advance(5*time.Minute + time.Second)
	if st, _ := pairStatus(r, `{"code":"`+c+`"}`); st != 400 {
		t.Fatalf("expired code: %d", st)
	}
}

func TestPairNeedsLiveBrowser(t *testing.T) {
	r := startRelay(t, nil)
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	c := code(t, b)
	b.Close()
	<-b.Closed()
	// The relay sees the close asynchronously.
	adaptertest.WaitFor(t, "the code of a disconnected browser to be refused", func() bool {
		st, body := pairStatus(r, `{"code":"`+c+`"}`)
		return st == 400 && strings.Contains(body, "INVALID_OR_EXPIRED_CODE")
	})
}

func TestPairBadInput(t *testing.T) {
	r := startRelay(t, nil)
	for _, tc := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"code":"ZZZZZZZZZZZZ"}`, 400, "INVALID_OR_EXPIRED_CODE"},
		{`{"code":"ABC"}`, 400, "INVALID_OR_EXPIRED_CODE"},
		{`{"code":"0123456789AB"}`, 400, "INVALID_OR_EXPIRED_CODE"},
		{`{"code":"０１２３４５６７８９ＡＢ"}`, 400, "INVALID_OR_EXPIRED_CODE"},
		{`{"code":12}`, 400, "INVALID_REQUEST"},
		{`{}`, 400, "INVALID_REQUEST"},
		{``, 400, "INVALID_REQUEST"},
		{`not json`, 400, "INVALID_REQUEST"},
		{`{"code":"` + strings.Repeat("A", 2000) + `"}`, 413, "BODY_TOO_LARGE"},
		// The limit is 1 KiB: exactly 1024 bytes is read, 1025 is not.
		{`{"code":"0123456789AB"}` + strings.Repeat(" ", 1024-len(`{"code":"0123456789AB"}`)), 400, "INVALID_OR_EXPIRED_CODE"},
		{`{"code":"0123456789AB"}` + strings.Repeat(" ", 1025-len(`{"code":"0123456789AB"}`)), 413, "BODY_TOO_LARGE"},
	} {
		st, body := pairStatus(r, tc.body)
		if st != tc.status || !strings.Contains(body, `"`+tc.code+`"`) {
			t.Errorf("%.40q: %d %s, want %d %s", tc.body, st, body, tc.status, tc.code)
		}
	}
	if resp := r.Do(adaptertest.Request{Path: "/api/pair"}); resp.Status != 405 {
		t.Errorf("GET /api/pair: %d", resp.Status)
	}
}

func TestPairRateLimit(t *testing.T) {
	clock := &fakeClock{}
	r := startRelay(t, func(s *Server) { s.Now = clock.now })
	for i := range 12 {
		if st, _ := pairStatus(r, `{"code":"000000000000"}`); st != 400 {
			t.Fatalf("attempt %d: %d", i+1, st)
		}
	}
	resp := r.Do(adaptertest.Request{Method: "POST", Path: "/api/pair", Body: []byte(`{"code":"000000000000"}`)})
	if resp.Status != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("13th attempt: %d", resp.Status)
	}
	checkJSONHeaders(t, resp)
	// Even a valid code is refused while limited.
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	c := code(t, b)
	if st, _ := pairStatus(r, `{"code":"`+c+`"}`); st != 429 {
		t.Fatalf("valid code while limited: %d", st)
	}
	clock.advance(61 * time.Second)
	r.pair(t, c)
}

func TestRateLimiterBounded(t *testing.T) {
	now := time.Now()
	rl := newRateLimiter(2, time.Minute, 3)
	for _, k := range []string{"a", "b", "c"} {
		if !rl.allow(k, now) {
			t.Fatalf("%s refused", k)
		}
	}
	if rl.allow("d", now) {
		t.Fatal("a fourth peer was tracked beyond the bound")
	}
	if !rl.allow("a", now) || rl.allow("a", now) {
		t.Fatal("per-peer limit of 2 not applied")
	}
	later := now.Add(time.Minute + time.Second)
	if !rl.allow("d", later) {
		t.Fatal("expired entries were not reclaimed")
	}
	if rl.size() != 1 {
		t.Fatalf("tracking %d entries after expiry, want 1", rl.size())
	}
}

func TestNormalizeCode(t *testing.T) {
	for in, want := range map[string]string{
		"abcdef012345":   "ABCDEF012345",
		" ABCDEF012345 ": "ABCDEF012345",
		"AbCdEf012345":   "ABCDEF012345",
		"abcdefg12345":   "",
		"abcdef01234":    "",
		"ÄBCDEF012345":   "",
	} {
		got, ok := normalizeCode(in)
		if got != want || ok != (want != "") {
			t.Errorf("normalizeCode(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
}

func TestPairConsumesAtomically(t *testing.T) {
	r := startRelay(t, nil)
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	c := code(t, b)
	const n = 8
	statuses := make(chan int, n)
	for range n {
		go func() {
			resp, err := adaptertest.Do(r.URL("/api/pair"), adaptertest.Request{Method: "POST", Body: []byte(`{"code":"` + c + `"}`)})
			if err != nil {
				statuses <- 0
				return
			}
			statuses <- resp.Status
		}()
	}
	ok := 0
	for range n {
		switch st := <-statuses; st {
		case 200:
			ok++
		case 400:
		default:
			t.Errorf("concurrent pair: %d", st)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of %d concurrent pairings with one code succeeded, want 1", ok, n)
	}
}
