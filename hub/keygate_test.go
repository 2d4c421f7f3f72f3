package hub

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestKeyGate(t *testing.T) {
	for _, header := range []string{"X-Test-Key", "Authorization"} {
		g := &KeyGate{Header: header, Key: func() string { return "k3y" }, Port: func() int { return 4000 }}
		var passed int
		h := g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { passed++ }))
		key := "k3y"
		if header == "Authorization" {
			key = "Bearer k3y"
		}
		for _, tc := range []struct {
			name   string
			host   string
			origin string
			key    string
			want   int
		}{
			{"ok", "127.0.0.1:4000", "", key, 200},
			{"localhost ok", "localhost:4000", "", key, 200},
			// The Origin refusal comes first: even the right key is refused.
			{"origin with the right key", "127.0.0.1:4000", "http://127.0.0.1:4000", key, 403},
			{"origin null", "127.0.0.1:4000", "null", key, 403},
			{"rebound host", "evil.example:4000", "", key, 403},
			{"other port", "127.0.0.1:4001", "", key, 403},
			{"no key", "127.0.0.1:4000", "", "", 401},
			{"wrong key", "127.0.0.1:4000", "", key + "x", 401},
		} {
			r := httptest.NewRequest("GET", "/status", nil)
			r.Host = tc.host
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if tc.key != "" {
				r.Header.Set(header, tc.key)
			}
			w := httptest.NewRecorder()
			before := passed
			h.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Errorf("%s/%s: status %d, want %d (%s)", header, tc.name, w.Code, tc.want, w.Body)
			}
			if (tc.want == 200) != (passed > before) {
				t.Errorf("%s/%s: handler ran = %v", header, tc.name, passed > before)
			}
		}
	}
	// A server without a key yet refuses everything.
	g := &KeyGate{Header: "X-K", Key: func() string { return "" }, Port: func() int { return 1 }}
	r := httptest.NewRequest("GET", "/", nil)
	r.Host = "127.0.0.1:1"
	w := httptest.NewRecorder()
	g.Wrap(http.NotFoundHandler()).ServeHTTP(w, r)
	if w.Code != 401 {
		t.Errorf("empty key: status %d", w.Code)
	}
}
