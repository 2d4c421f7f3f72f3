package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/plugin"
)

// TestClassify covers every action of the spec's table.
func TestClassify(t *testing.T) {
	p := New(NewConfig(), Options{})
	for tool, spec := range actions {
		for _, a := range spec.reads {
			if m, err := p.Classify(tool, json.RawMessage(`{"action":"`+a+`"}`)); err != nil || m {
				t.Errorf("%s %s: mutation=%v err=%v, want read", tool, a, m, err)
			}
		}
		for _, a := range spec.mutations {
			if m, err := p.Classify(tool, json.RawMessage(`{"action":"`+a+`"}`)); err != nil || !m {
				t.Errorf("%s %s: mutation=%v err=%v, want mutation", tool, a, m, err)
			}
		}
	}
	want := map[string]int{ToolInfo: 7, ToolSession: 12, ToolWorker: 13, ToolRequest: 4}
	for tool, n := range want {
		if got := len(actions[tool].reads) + len(actions[tool].mutations); got != n {
			t.Errorf("%s has %d actions, the spec lists %d", tool, got, n)
		}
	}
	tools := p.Tools()
	if len(tools) != 4 || tools[0].Mutation || !tools[1].Mutation {
		t.Fatalf("tools = %+v", tools)
	}
	for _, tl := range tools {
		var s map[string]any
		if err := json.Unmarshal(tl.InputSchema, &s); err != nil || s["type"] != "object" {
			t.Errorf("%s schema: %v", tl.Name, err)
		}
	}
}

func TestBadInput(t *testing.T) {
	p := New(NewConfig(), Options{})
	for _, tc := range []struct {
		name, tool, args, code string
	}{
		{"unknown tool", "opencode_shell", `{"action":"status"}`, CodeUnknownTool},
		{"no args", ToolInfo, ``, CodeMissingArgument},
		{"null args", ToolInfo, `null`, CodeMissingArgument},
		{"array args", ToolInfo, `["status"]`, CodeInvalidArguments},
		{"bad json", ToolInfo, `{"action":`, CodeInvalidArguments},
		{"no action", ToolSession, `{"sessionID":"ses_1"}`, CodeMissingArgument},
		{"unknown action", ToolSession, `{"action":"delete"}`, CodeUnknownAction},
		{"action of another tool", ToolInfo, `{"action":"start"}`, CodeUnknownAction},
		{"action not a string", ToolInfo, `{"action":1}`, CodeInvalidArguments},
		{"limit not a number", ToolSession, `{"action":"list","limit":"5"}`, CodeInvalidArguments},
		{"tasks not an array", ToolWorker, `{"action":"swarm_start","tasks":"a"}`, CodeInvalidArguments},
		{"answers wrong shape", ToolRequest, `{"action":"answer_question","requestID":"que_1","answers":["a"]}`, CodeInvalidArguments},
		{"unknown field", ToolInfo, `{"action":"status","verbose":true}`, CodeInvalidArguments},
		{"field of another tool", ToolInfo, `{"action":"status","prompt":"x"}`, CodeInvalidArguments},
		{"session id injection", ToolSession, `{"action":"get","sessionID":"ses_1/../../global/config"}`, CodeInvalidArguments},
		{"wrong id prefix", ToolWorker, `{"action":"get","workerID":"msg_1"}`, CodeInvalidArguments},
		{"bad message id", ToolWorker, `{"action":"result","workerID":"ses_1","messageID":"msg_1?x"}`, CodeInvalidArguments},
		{"bad reply", ToolRequest, `{"action":"reply_permission","requestID":"per_1","reply":"yes"}`, CodeInvalidArguments},
		{"bad model", ToolSession, `{"action":"set_selection","sessionID":"ses_1","model":"gpt"}`, CodeInvalidArguments},
		{"timeout too long", ToolWorker, `{"action":"wait","workerID":"ses_1","timeoutMs":3600000}`, CodeInvalidArguments},
		{"too many tasks", ToolWorker, `{"action":"swarm_start","tasks":[` + repeatTasks(17) + `]}`, CodeInvalidArguments},
		{"empty task", ToolWorker, `{"action":"swarm_start","tasks":[{"prompt":" "}]}`, CodeInvalidArguments},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Classify(tc.tool, json.RawMessage(tc.args))
			var pe *plugin.Error
			if !errors.As(err, &pe) || pe.Code != tc.code {
				t.Fatalf("Classify = %v, want %s", err, tc.code)
			}
			// Call refuses the same way, before any network.
			_, err = p.Call(context.Background(), plugin.Authority{Root: t.TempDir()}, tc.tool, json.RawMessage(tc.args))
			if !errors.As(err, &pe) || pe.Code != tc.code {
				t.Fatalf("Call = %v, want %s", err, tc.code)
			}
		})
	}
}

func repeatTasks(n int) string {
	s := ""
	for i := range n {
		if i > 0 {
			s += ","
		}
		s += `{"prompt":"t"}`
	}
	return s
}

// TestMissingArguments: action-level requirements are refused before any
// session is touched (the server here is never reachable).
func TestMissingArguments(t *testing.T) {
	f := newFakeOC(t, "", "")
	p := fakePlugin(t, f.URL, nil, nil)
	auth := plugin.Authority{Root: t.TempDir(), Write: true, Terminal: true}
	for _, tc := range []struct{ tool, args string }{
		{ToolSession, `{"action":"get"}`},
		{ToolSession, `{"action":"send"}`},
		{ToolWorker, `{"action":"result"}`},
		{ToolWorker, `{"action":"start"}`},
		{ToolWorker, `{"action":"swarm_get"}`},
		{ToolRequest, `{"action":"reply_permission"}`},
	} {
		if e := callErr(t, p, auth, tc.tool, tc.args); e.Code != CodeMissingArgument {
			t.Errorf("%s %s = %v", tc.tool, tc.args, e)
		}
	}
	if e := callErr(t, p, auth, ToolWorker, `{"action":"start","prompt":"x","workdir":"/project/../etc"}`); e.Code != CodeInvalidArguments {
		t.Errorf("escaping workdir = %v", e)
	}
}

func TestIDsAscend(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	g := &idGen{now: func() time.Time { return now }}
	prev := ""
	for i := range 5000 {
		if i%1000 == 0 {
			now = now.Add(time.Millisecond)
		}
		id := g.next("msg")
		if !isMessageID(id) || len(id) != len("msg_")+26 || id[:16] <= prev[:min(16, len(prev))] && prev != "" {
			t.Fatalf("id %d = %q after %q", i, id, prev)
		}
		prev = id
	}
}

func FuzzParseArgs(f *testing.F) {
	f.Add(ToolWorker, `{"action":"start","prompt":"x","tasks":[{"prompt":"a"}]}`)
	f.Add(ToolRequest, `{"action":"answer_question","requestID":"que_1","answers":[["a"]]}`)
	f.Add(ToolSession, `{"action":"get","sessionID":"ses_1"}`)
	f.Fuzz(func(t *testing.T, tool, raw string) {
		a, _, err := parseArgs(tool, json.RawMessage(raw))
		if err != nil {
			var pe *plugin.Error
			if !errors.As(err, &pe) {
				t.Fatalf("unstructured error %T", err)
			}
			return
		}
		// Whatever is accepted is safe to put in an OpenCode URL path.
		for _, id := range []string{a.SessionID, a.WorkerID, a.MessageID, a.RequestID} {
			for _, c := range id {
				if c == '/' || c == '?' || c == '#' || c == '%' || c == '.' {
					t.Fatalf("accepted id %q", id)
				}
			}
		}
	})
}
