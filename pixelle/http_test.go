package pixelle

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
)

// checkJSONHeaders asserts the headers every JSON answer carries.
func checkJSONHeaders(t *testing.T, resp adaptertest.Response) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	if !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Origin") {
		t.Errorf("Vary %q lacks Origin", resp.Header.Values("Vary"))
	}
}

func TestHealth(t *testing.T) {
	r := startRelay(t, nil)
	for _, tc := range []struct {
		name   string
		header http.Header
		acao   string
	}{
		{"website origin", browserHeader(), website},
		{"native, no origin", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := r.Do(adaptertest.Request{Path: "/health", Header: tc.header})
			if resp.Status != 200 || strings.TrimSpace(string(resp.Body)) != `{"ok":true,"version":"0.2.0"}` {
				t.Fatalf("health: %d %s", resp.Status, resp.Body)
			}
			checkJSONHeaders(t, resp)
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tc.acao {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tc.acao)
			}
		})
	}
}

func TestPreflight(t *testing.T) {
	r := startRelay(t, nil)
	for _, path := range []string{"/health", "/api/sessions", "/api/pair", "/relay", "/elsewhere"} {
		resp := r.Do(adaptertest.Request{Method: "OPTIONS", Path: path, Header: http.Header{
			"Origin": {website}, "Access-Control-Request-Method": {"POST"}, "Access-Control-Request-Headers": {"content-type"},
		}})
		if resp.Status != 204 {
			t.Fatalf("%s preflight: %d", path, resp.Status)
		}
		want := map[string]string{
			"Access-Control-Allow-Origin":  website,
			"Access-Control-Allow-Methods": "GET, POST, OPTIONS",
			"Access-Control-Allow-Headers": "Content-Type",
			"Vary":                         "Origin",
		}
		for k, v := range want {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s %s: %q, want %q", path, k, got, v)
			}
		}
		if len(resp.Body) != 0 {
			t.Errorf("204 with a body %q", resp.Body)
		}
	}
	for _, tc := range []struct {
		name   string
		header http.Header
	}{
		{"no origin", nil},
		{"other origin", http.Header{"Origin": {"https://evil.example"}}},
		{"null origin", http.Header{"Origin": {"null"}}},
	} {
		resp := r.Do(adaptertest.Request{Method: "OPTIONS", Path: "/api/sessions", Header: tc.header})
		if resp.Status != 403 {
			t.Errorf("%s preflight: %d, want 403", tc.name, resp.Status)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s preflight echoed an origin", tc.name)
		}
	}
}

func TestUntrustedOriginRejected(t *testing.T) {
	r := startRelay(t, nil)
	origins := map[string]http.Header{
		"other site":        {"Origin": {"https://evil.example"}},
		"website subdomain": {"Origin": {"https://x.pixelle.example"}},
		"http scheme":       {"Origin": {"http://pixelle.example"}},
		"null":              {"Origin": {"null"}},
		"relay itself":      {"Origin": {r.URL("")}},
		"two origins":       {"Origin": {website, "https://evil.example"}},
	}
	for name, hdr := range origins {
		for _, req := range []adaptertest.Request{
			{Path: "/health"},
			{Method: "POST", Path: "/api/sessions"},
			{Method: "POST", Path: "/api/pair", Body: []byte(`{"code":"000000000000"}`)},
			{Path: "/relay"},
			{Path: "/nope"},
		} {
			req.Header = hdr
			resp := r.Do(req)
			if resp.Status != 403 {
				t.Errorf("%s %s %s: %d, want 403", name, req.Method, req.Path, resp.Status)
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("%s %s: echoed an untrusted origin", name, req.Path)
			}
			checkJSONHeaders(t, resp)
		}
		c, err := r.Dial("/relay", adaptertest.DialOptions{Header: hdr})
		if err == nil {
			c.Close()
			t.Errorf("%s: upgrade accepted", name)
		} else if c.Status() != 403 {
			t.Errorf("%s: upgrade refused with %d, want 403", name, c.Status())
		}
	}
}

func TestHostValidation(t *testing.T) {
	r := startRelay(t, nil)
	port := r.Port()
	for _, host := range []string{
		fmt.Sprintf("evil.example:%d", port),
		fmt.Sprintf("localhost:%d", port),
		fmt.Sprintf("127.0.0.1:%d", port+1),
		"127.0.0.1",
		fmt.Sprintf("[::1]:%d", port),
		fmt.Sprintf("127.0.0.2:%d", port),
	} {
		t.Run(host, func(t *testing.T) {
			for _, req := range []adaptertest.Request{
				{Path: "/health"},
				{Path: "/health", Header: browserHeader()},
				{Method: "POST", Path: "/api/sessions", Header: browserHeader()},
				{Method: "POST", Path: "/api/pair", Body: []byte(`{"code":"000000000000"}`)},
				{Method: "OPTIONS", Path: "/api/sessions", Header: browserHeader()},
			} {
				req.Host = host
				resp := r.Do(req)
				if resp.Status != 403 || !strings.Contains(string(resp.Body), "HOST_NOT_ALLOWED") {
					t.Errorf("%s %s: %d %s, want 403 HOST_NOT_ALLOWED", req.Method, req.Path, resp.Status, resp.Body)
				}
			}
			c, err := r.Dial("/relay", adaptertest.DialOptions{Origin: website, Host: host})
			if err == nil {
				c.Close()
				t.Fatal("upgrade with a foreign Host accepted")
			}
			if c.Status() != 403 {
				t.Errorf("upgrade refused with %d, want 403", c.Status())
			}
		})
	}
}

func TestCreateSession(t *testing.T) {
	r := startRelay(t, nil)
	// Missing Origin never creates a browser session.
	resp := r.Do(adaptertest.Request{Method: "POST", Path: "/api/sessions"})
	if resp.Status != 403 {
		t.Fatalf("session without Origin: %d", resp.Status)
	}
	resp = r.Do(adaptertest.Request{Method: "POST", Path: "/api/sessions", Header: browserHeader()})
	if resp.Status != 201 {
		t.Fatalf("create: %d %s", resp.Status, resp.Body)
	}
	checkJSONHeaders(t, resp)
	if resp.Header.Get("Access-Control-Allow-Origin") != website {
		t.Errorf("no CORS echo on 201")
	}
	var v struct{ ID, BrowserToken string }
	mustUnmarshal(t, resp.Body, &v)
	id2, tok2 := r.createSession(t)
	for _, s := range []string{v.ID, v.BrowserToken, id2, tok2} {
		raw, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(raw)*8 < 192 {
			t.Errorf("credential %d bits (err %v), want >= 192 random bits", len(raw)*8, err)
		}
	}
	if v.ID == id2 || v.BrowserToken == tok2 || v.ID == v.BrowserToken {
		t.Error("credentials repeat")
	}
	// No listing endpoint.
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		resp := r.Do(adaptertest.Request{Method: m, Path: "/api/sessions", Header: browserHeader()})
		if resp.Status != 405 || strings.Contains(string(resp.Body), v.ID) {
			t.Errorf("%s /api/sessions: %d %s", m, resp.Status, resp.Body)
		}
		// CORS on error answers too.
		if resp.Header.Get("Access-Control-Allow-Origin") != website {
			t.Errorf("%s: no CORS echo on an error", m)
		}
	}
	big := make([]byte, 4<<10)
	resp = r.Do(adaptertest.Request{Method: "POST", Path: "/api/sessions", Header: browserHeader(), Body: big})
	if resp.Status != 413 {
		t.Errorf("huge session body: %d", resp.Status)
	}
}

func TestSessionLimit(t *testing.T) {
	r := startRelay(t, func(s *Server) { s.MaxSessions = 3 })
	for range 3 {
		r.createSession(t)
	}
	resp := r.Do(adaptertest.Request{Method: "POST", Path: "/api/sessions", Header: browserHeader()})
	if resp.Status != 503 || !strings.Contains(string(resp.Body), "TOO_MANY_SESSIONS") {
		t.Fatalf("session over the limit: %d %s", resp.Status, resp.Body)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != website {
		t.Error("no CORS echo on 503")
	}
}

func TestDefaultLimits(t *testing.T) {
	s := New(&Config{Website: website})
	if s.MaxSessions != 100 || s.MaxInFlight != 20 || s.MaxMessage != 2<<20 || s.PairBodyLimit != 1024 ||
		s.RateLimit != 12 || s.RateWindow.Seconds() != 60 || s.AuthTimeout.Seconds() != 5 ||
		s.CommandTimeout.Seconds() != 12 || s.PairCodeTTL.Minutes() != 5 || s.SessionTTL.Hours() != 1 {
		t.Fatalf("defaults differ from the contract: %+v", s)
	}
	// A relay for anything but an exact origin never serves.
	for _, bad := range []string{"", "pixelle.example", "https://pixelle.example/app", "null"} {
		err := New(&Config{Website: bad}).Serve(context.Background(), &adapters.Env{Log: adaptertest.Logger(t)})
		if err == nil || !strings.Contains(err.Error(), "exact origin") {
			t.Errorf("Serve for website %q: %v", bad, err)
		}
	}
}

func TestNotFoundAndUpgradeRequired(t *testing.T) {
	r := startRelay(t, nil)
	if resp := r.Do(adaptertest.Request{Path: "/"}); resp.Status != 404 {
		t.Errorf("/: %d", resp.Status)
	}
	if resp := r.Do(adaptertest.Request{Path: "/relay"}); resp.Status != 426 {
		t.Errorf("plain GET /relay: %d", resp.Status)
	}
	if c, err := r.Dial("/other", adaptertest.DialOptions{Origin: website}); err == nil {
		c.Close()
		t.Error("upgrade on another path accepted")
	}
}
