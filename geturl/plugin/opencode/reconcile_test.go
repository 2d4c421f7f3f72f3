package opencode

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/plugin"
)

// flakyOC answers just enough of OpenCode's session API to start a worker,
// and cuts the connection of chosen requests, either after applying them
// (the ambiguous case) or before.
type flakyOC struct {
	*httptest.Server
	dir string

	mu       sync.Mutex
	sessions []map[string]any
	messages map[string]bool
	prompts  int
	creates  int
	// busy are the sessions /session/status reports as running a turn.
	busy map[string]bool
	// cut decides per request: "after" applies then drops, "before" drops.
	cut func(method, path string, n int) string
}

func newFlakyOC(t *testing.T, dir string) *flakyOC {
	f := &flakyOC{dir: dir, messages: map[string]bool{}, busy: map[string]bool{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func drop(w http.ResponseWriter) {
	conn, _, _ := w.(http.Hijacker).Hijack()
	conn.Close()
}

func (f *flakyOC) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := r.URL.Path
	mode := ""
	switch {
	case r.Method == "POST" && p == "/session":
		f.creates++
		if f.cut != nil {
			mode = f.cut(r.Method, p, f.creates)
		}
	case r.Method == "POST" && strings.HasSuffix(p, "/prompt_async"):
		f.prompts++
		if f.cut != nil {
			mode = f.cut(r.Method, p, f.prompts)
		}
	}
	if mode == "before" {
		drop(w)
		return
	}
	var out any
	switch {
	case p == "/global/health":
		out = map[string]any{"healthy": true, "version": "1"}
	case r.Method == "GET" && p == "/session":
		out = f.sessions
	case r.Method == "POST" && p == "/session":
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		body["id"] = "ses_" + strings.Repeat("x", 3) + string(rune('a'+len(f.sessions)))
		body["directory"] = f.dir
		body["time"] = map[string]any{"created": len(f.sessions), "updated": 0}
		f.sessions = append(f.sessions, body)
		out = body
	case r.Method == "GET" && strings.HasSuffix(p, "/children"):
		parent := strings.Split(p, "/")[2]
		kids := []any{}
		for _, s := range f.sessions {
			if s["parentID"] == parent {
				kids = append(kids, s)
			}
		}
		out = kids
	case r.Method == "GET" && strings.Contains(p, "/message/"):
		if !f.messages[p[strings.LastIndex(p, "/")+1:]] {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"name":"NotFoundError","data":{"message":"Message not found"}}`))
			return
		}
		out = map[string]any{}
	case r.Method == "POST" && strings.HasSuffix(p, "/prompt_async"):
		var body struct {
			MessageID string `json:"messageID"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.messages[body.MessageID] = true
		if mode == "after" {
			drop(w)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	case r.Method == "GET" && p == "/session/status":
		st := map[string]any{}
		for id := range f.busy {
			st[id] = map[string]any{"type": "busy"}
		}
		out = st
	case r.Method == "PATCH" && strings.HasPrefix(p, "/session/ses_"):
		// OpenCode appends permission rules and replaces metadata.
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		for _, s := range f.sessions {
			if s["id"] == strings.TrimPrefix(p, "/session/") {
				if rules, ok := body["permission"].([]any); ok {
					old, _ := s["permission"].([]any)
					s["permission"] = append(old, rules...)
				}
				if m, ok := body["metadata"]; ok {
					s["metadata"] = m
				}
				out = s
			}
		}
		if out == nil {
			w.WriteHeader(http.StatusNotFound)
			return
		}
	case r.Method == "GET" && strings.HasPrefix(p, "/session/ses_"):
		for _, s := range f.sessions {
			if s["id"] == strings.TrimPrefix(p, "/session/") {
				out = s
			}
		}
		if out == nil {
			w.WriteHeader(http.StatusNotFound)
			return
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if mode == "after" {
		drop(w)
		return
	}
	json.NewEncoder(w).Encode(out)
}

func (f *flakyOC) counts() (creates, prompts, admitted, sessions int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.creates, f.prompts, len(f.messages), len(f.sessions)
}

func TestAmbiguousFailuresAreReconciled(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  func(method, path string, n int) string
		// what OpenCode saw and holds afterwards
		creates, prompts, sessions int
		reconciled                 bool
	}{
		{"clean", nil, 2, 1, 2, false},
		// The prompt landed but the answer was lost: looked up, not re-sent.
		{"prompt lost after admission", func(m, p string, n int) string {
			if strings.HasSuffix(p, "/prompt_async") && n == 1 {
				return "after"
			}
			return ""
		}, 2, 1, 2, true},
		// The prompt never landed: the lookup says so and it is sent once more.
		{"prompt lost before admission", func(m, p string, n int) string {
			if strings.HasSuffix(p, "/prompt_async") && n == 1 {
				return "before"
			}
			return ""
		}, 2, 2, 2, false},
		// The worker was created but the answer was lost: found by its
		// request id among the group's children, no second worker.
		{"create lost after creation", func(m, p string, n int) string {
			if p == "/session" && n == 2 {
				return "after"
			}
			return ""
		}, 2, 1, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			f := newFlakyOC(t, root)
			f.cut = tc.cut
			cfg := NewConfig()
			cfg.URL = f.URL
			p := New(cfg, Options{Owner: (&owner{err: errNoOwner}).get,
				Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
			out := callOK(t, p, plugin.Authority{Root: root, Write: true, Terminal: true}, ToolWorker, `{"action":"start","prompt":"go"}`)
			creates, prompts, admitted, sessions := f.counts()
			if creates != tc.creates || prompts != tc.prompts || admitted != 1 || sessions != tc.sessions {
				t.Fatalf("creates %d prompts %d admitted %d sessions %d; want %d %d 1 %d", creates, prompts, admitted, sessions, tc.creates, tc.prompts, tc.sessions)
			}
			if dig(out, "worker", "reconciled") != nil != tc.reconciled {
				t.Fatalf("reconciled = %v, want %v (%v)", dig(out, "worker", "reconciled"), tc.reconciled, out)
			}
		})
	}
}
