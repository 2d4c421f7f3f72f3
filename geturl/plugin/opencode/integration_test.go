package opencode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/plugin"
	"github.com/hubdev/hub/geturl/plugin/opencode/internal/octest"
)

// These tests run against a real `opencode serve` (skipped when the binary
// is absent) whose only model is octest's scripted fake on loopback.

func realPlugin(t *testing.T, url string, mod func(*Config)) *Plugin {
	cfg := NewConfig()
	cfg.URL = url
	if mod != nil {
		mod(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return New(cfg, Options{})
}

// rawSession creates a session straight through OpenCode's API, the way a
// user's TUI would: an existing, externally owned session.
func rawSession(t *testing.T, base, dir string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"title": "user session"})
	resp, err := http.Post(base+"/session?directory="+dir, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || s.ID == "" {
		t.Fatalf("create session: %v %d", err, resp.StatusCode)
	}
	return s.ID
}

func TestRealServer(t *testing.T) {
	srv := octest.Start(t, octest.Options{Permission: map[string]any{"bash": "ask"}})
	p := realPlugin(t, srv.URL, nil)
	full := plugin.Authority{Root: srv.Project, Write: true, Terminal: true}
	readOnly := plugin.Authority{Root: srv.Project}
	writeOnly := plugin.Authority{Root: srv.Project, Write: true}

	t.Run("status pins the process", func(t *testing.T) {
		out := callOK(t, p, readOnly, ToolInfo, `{"action":"status"}`)
		if str(out, "state") != StateReady || str(out, "instance", "pinning") != "process" || str(out, "version") == "" {
			t.Fatalf("status = %v", out)
		}
		if p.Status(t.Context()) != StateReady {
			t.Fatal("Status is not ready")
		}
	})

	t.Run("catalog", func(t *testing.T) {
		for _, tc := range []struct{ args, want string }{
			{`{"action":"providers"}`, `"id":"fake"`},
			{`{"action":"models","provider":"fake"}`, `"id":"fake/fake-model"`},
			{`{"action":"agents"}`, `"name":"build"`},
			{`{"action":"limits"}`, `"maxWorkers":8`},
			{`{"action":"capabilities"}`, `"workerCeiling"`},
			{`{"action":"usage"}`, `"byOwner"`},
		} {
			out := callOK(t, p, readOnly, ToolInfo, tc.args)
			b, _ := json.Marshal(out)
			if !strings.Contains(string(b), tc.want) {
				t.Errorf("%s: %s lacks %s", tc.args, b, tc.want)
			}
			if strings.Contains(string(b), srv.Project) {
				t.Errorf("%s leaks the host path: %s", tc.args, b)
			}
		}
	})

	var workerID string
	t.Run("worker start, wait, exact result", func(t *testing.T) {
		out := callOK(t, p, full, ToolWorker, `{"action":"start","prompt":"hello worker","title":"greeter"}`)
		workerID = str(out, "worker", "workerID")
		mid := str(out, "worker", "messageID")
		if workerID == "" || !strings.HasPrefix(mid, "msg_") || str(out, "worker", "workdir") != "/project" {
			t.Fatalf("start = %v", out)
		}
		w := callOK(t, p, full, ToolWorker, fmt.Sprintf(`{"action":"wait","workerID":%q,"timeoutMs":60000}`, workerID))
		if str(w, "result", "state") != TurnCompleted || str(w, "result", "text") != "echo: hello worker" || str(w, "result", "messageID") != mid {
			t.Fatalf("wait = %v", w)
		}
		r := callOK(t, p, readOnly, ToolWorker, fmt.Sprintf(`{"action":"result","workerID":%q,"messageID":%q}`, workerID, mid))
		if str(r, "result", "text") != "echo: hello worker" {
			t.Fatalf("result = %v", r)
		}
		// A second turn: its answer is correlated to its own message, and
		// the first turn's result stays the first turn's.
		c := callOK(t, p, full, ToolWorker, fmt.Sprintf(`{"action":"continue","workerID":%q,"prompt":"second"}`, workerID))
		mid2 := str(c, "admitted", "messageID")
		w2 := callOK(t, p, full, ToolWorker, fmt.Sprintf(`{"action":"wait","workerID":%q,"messageID":%q,"timeoutMs":60000}`, workerID, mid2))
		if str(w2, "result", "text") != "echo: second" {
			t.Fatalf("second turn = %v", w2)
		}
		r1 := callOK(t, p, readOnly, ToolWorker, fmt.Sprintf(`{"action":"result","workerID":%q,"messageID":%q}`, workerID, mid))
		if str(r1, "result", "text") != "echo: hello worker" {
			t.Fatalf("first turn after the second = %v", r1)
		}
		l := callOK(t, p, readOnly, ToolWorker, `{"action":"list"}`)
		if str(l, "workers", 0, "id") != workerID || str(l, "workers", 0, "owner") != "geturl" {
			t.Fatalf("list = %v", l)
		}
	})

	t.Run("ceiling reaches the model", func(t *testing.T) {
		// Without terminal the worker's session denies bash and every
		// edit, so OpenCode does not even offer those tools to the model.
		out := callOK(t, p, writeOnly, ToolWorker, `{"action":"start","prompt":"CALL_BASH:echo nope-ceiling"}`)
		id := str(out, "worker", "workerID")
		w := callOK(t, p, writeOnly, ToolWorker, fmt.Sprintf(`{"action":"wait","workerID":%q,"timeoutMs":60000}`, id))
		if str(w, "result", "state") != TurnCompleted || !strings.HasPrefix(str(w, "result", "text"), "echo: ") {
			t.Fatalf("wait = %v", w)
		}
		saw := false
		for _, r := range srv.Provider.Requests() {
			if strings.Contains(r.Last().Text(), "nope-ceiling") && len(r.Tools) > 0 {
				saw = true
				for _, tool := range []string{"bash", "task", "edit", "write"} {
					if r.HasTool(tool) {
						t.Errorf("the model was offered %s under a write-only ceiling", tool)
					}
				}
				if !r.HasTool("read") {
					t.Errorf("read should stay available")
				}
			}
		}
		if !saw {
			t.Fatal("no model request for the worker's prompt")
		}
	})

	t.Run("permission wall routed and answered", func(t *testing.T) {
		out := callOK(t, p, full, ToolWorker, `{"action":"start","prompt":"CALL_BASH:echo wall-ok"}`)
		id := str(out, "worker", "workerID")
		w := callOK(t, p, full, ToolWorker, fmt.Sprintf(`{"action":"wait","workerID":%q,"timeoutMs":60000}`, id))
		reqID := str(w, "result", "blocked", "permissions", 0, "requestID")
		if reqID == "" || str(w, "result", "blocked", "permissions", 0, "permission") != "bash" {
			t.Fatalf("wait did not report the wall: %v", w)
		}
		l := callOK(t, p, readOnly, ToolRequest, `{"action":"list"}`)
		if str(l, "permissions", 0, "requestID") != reqID || dig(l, "permissions", 0, "approvable") != false {
			t.Fatalf("list = %v", l)
		}
		// Granting bash is exercising it: not without terminal.
		if e := callErr(t, p, writeOnly, ToolRequest, fmt.Sprintf(`{"action":"reply_permission","requestID":%q,"reply":"once"}`, reqID)); e.Code != CodeForbidden {
			t.Fatalf("approve without terminal: %v", e)
		}
		callOK(t, p, full, ToolRequest, fmt.Sprintf(`{"action":"reply_permission","requestID":%q,"reply":"once"}`, reqID))
		w = callOK(t, p, full, ToolWorker, fmt.Sprintf(`{"action":"wait","workerID":%q,"timeoutMs":60000}`, id))
		if str(w, "result", "state") != TurnCompleted || str(w, "result", "text") != "done: wall-ok" {
			t.Fatalf("after the reply = %v", w)
		}
	})

	t.Run("existing sessions", func(t *testing.T) {
		sid := rawSession(t, srv.URL, srv.Project)
		l := callOK(t, p, readOnly, ToolSession, `{"action":"list"}`)
		b, _ := json.Marshal(l)
		if !strings.Contains(string(b), `"id":"`+sid+`"`) || !strings.Contains(string(b), `"owner":"external"`) {
			t.Fatalf("list = %s", b)
		}
		for _, auth := range []plugin.Authority{readOnly, writeOnly, {Root: srv.Project, Terminal: true}} {
			if e := callErr(t, p, auth, ToolSession, fmt.Sprintf(`{"action":"send","sessionID":%q,"prompt":"x"}`, sid)); e.Code != CodeForbidden {
				t.Fatalf("send with %+v: %v", auth, e)
			}
		}
		turn := callOK(t, p, full, ToolSession, fmt.Sprintf(`{"action":"turn","sessionID":%q,"prompt":"hi there","timeoutMs":60000}`, sid))
		mid := str(turn, "admitted", "messageID")
		if str(turn, "turn", "state") != TurnCompleted || str(turn, "turn", "text") != "echo: hi there" {
			t.Fatalf("turn = %v", turn)
		}
		m := callOK(t, p, readOnly, ToolSession, fmt.Sprintf(`{"action":"messages","sessionID":%q,"messageID":%q}`, sid, mid))
		if str(m, "turn", "text") != "echo: hi there" {
			t.Fatalf("messages by id = %v", m)
		}
		sel := callOK(t, p, full, ToolSession, fmt.Sprintf(`{"action":"set_selection","sessionID":%q,"agent":"plan","model":"fake/fake-model"}`, sid))
		if str(sel, "agent") != "plan" || str(sel, "model") != "fake/fake-model" {
			t.Fatalf("set_selection = %v", sel)
		}
		// Safety actions need no authority.
		callOK(t, p, readOnly, ToolSession, fmt.Sprintf(`{"action":"pause","sessionID":%q}`, sid))
		callOK(t, p, readOnly, ToolSession, fmt.Sprintf(`{"action":"abort","sessionID":%q}`, sid))
	})

	t.Run("sessions outside the root", func(t *testing.T) {
		outside := t.TempDir()
		sid := rawSession(t, srv.URL, outside)
		if e := callErr(t, p, full, ToolSession, fmt.Sprintf(`{"action":"get","sessionID":%q}`, sid)); e.Code != CodeOutsideRoot {
			t.Fatalf("get = %v", e)
		}
		if e := callErr(t, p, full, ToolSession, fmt.Sprintf(`{"action":"abort","sessionID":%q}`, sid)); e.Code != CodeOutsideRoot {
			t.Fatalf("abort = %v", e)
		}
		// A narrower root does not see the project's sessions either.
		sub := filepath.Join(srv.Project, "sub")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		l := callOK(t, p, plugin.Authority{Root: sub}, ToolSession, `{"action":"list"}`)
		if n := len(dig(l, "sessions").([]any)); n != 0 {
			t.Fatalf("sub-root sees %d sessions", n)
		}
		if e := callErr(t, p, plugin.Authority{Root: sub}, ToolWorker, fmt.Sprintf(`{"action":"get","workerID":%q}`, workerID)); e.Code != CodeOutsideRoot {
			t.Fatalf("worker from a sub-root = %v", e)
		}
	})

	t.Run("swarm", func(t *testing.T) {
		out := callOK(t, p, full, ToolWorker, `{"action":"swarm_start","tasks":[{"prompt":"task one"},{"prompt":"task two","title":"two"}]}`)
		id := str(out, "swarmID")
		if !strings.HasPrefix(id, "swm_") || len(dig(out, "members").([]any)) != 2 {
			t.Fatalf("swarm_start = %v", out)
		}
		w := callOK(t, p, full, ToolWorker, fmt.Sprintf(`{"action":"swarm_wait","swarmID":%q,"timeoutMs":60000}`, id))
		if dig(w, "done") != true {
			t.Fatalf("swarm_wait = %v", w)
		}
		texts := map[string]bool{}
		for i := range 2 {
			texts[str(w, "members", i, "lastTurn", "text")] = true
		}
		if !texts["echo: task one"] || !texts["echo: task two"] {
			t.Fatalf("member results = %v", texts)
		}
		l := callOK(t, p, readOnly, ToolWorker, `{"action":"swarm_list"}`)
		if str(l, "swarms", 0, "swarmID") != id {
			t.Fatalf("swarm_list = %v", l)
		}
	})

	t.Run("max workers admission", func(t *testing.T) {
		one := realPlugin(t, srv.URL, func(c *Config) { c.MaxWorkers = 1 })
		// A worker held busy by a permission wall occupies the only slot.
		out := callOK(t, one, full, ToolWorker, `{"action":"start","prompt":"CALL_BASH:echo hold"}`)
		id := str(out, "worker", "workerID")
		w := callOK(t, one, full, ToolWorker, fmt.Sprintf(`{"action":"wait","workerID":%q,"timeoutMs":60000}`, id))
		if dig(w, "result", "blocked") == nil {
			t.Fatalf("not blocked: %v", w)
		}
		if e := callErr(t, one, full, ToolWorker, `{"action":"start","prompt":"another"}`); e.Code != CodeWorkerLimit || !e.Retryable {
			t.Fatalf("second start = %v", e)
		}
		if e := callErr(t, one, full, ToolWorker, `{"action":"swarm_start","tasks":[{"prompt":"a"},{"prompt":"b"}]}`); e.Code != CodeInvalidArguments {
			t.Fatalf("oversized swarm = %v", e)
		}
		callOK(t, one, full, ToolWorker, fmt.Sprintf(`{"action":"cancel","workerID":%q}`, id))
	})
}

func TestRealServerAuth(t *testing.T) {
	const password = "correct horse battery staple"
	srv := octest.Start(t, octest.Options{Password: password})
	auth := plugin.Authority{Root: srv.Project}
	for _, tc := range []struct {
		name   string
		mod    func(*Config)
		want   string
		paired bool
	}{
		{"no credential", nil, StateNeedAuth, false},
		{"wrong password", func(c *Config) { c.BootstrapPassword = "nope" }, StateNeedAuth, false},
		{"bootstrap password", func(c *Config) { c.BootstrapPassword = password }, StateReady, true},
		{"device token", func(c *Config) { c.DeviceToken = password }, StateReady, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := realPlugin(t, srv.URL, tc.mod)
			out := callOK(t, p, auth, ToolInfo, `{"action":"status"}`)
			if str(out, "state") != tc.want || dig(out, "auth", "paired") != tc.paired || dig(out, "auth", "required") != true {
				t.Fatalf("status = %v", out)
			}
			b, _ := json.Marshal(out)
			if strings.Contains(string(b), password) {
				t.Fatal("status leaks the password")
			}
			if tc.want == StateNeedAuth {
				if e := callErr(t, p, auth, ToolInfo, `{"action":"agents"}`); e.Code != CodeNeedsAuth || strings.Contains(e.Error(), password) {
					t.Fatalf("agents = %v", e)
				}
				return
			}
			callOK(t, p, auth, ToolInfo, `{"action":"agents"}`)
			if tc.paired && p.client.bootstrap != "" {
				t.Fatal("the bootstrap password is still held after pairing")
			}
		})
	}
}
