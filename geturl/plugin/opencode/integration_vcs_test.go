package opencode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/plugin"
	"github.com/hubdev/hub/geturl/plugin/opencode/internal/octest"
)

// toolCall is one CALL_TOOL line for octest's scripted model.
func toolCall(name string, args map[string]any) string {
	b, _ := json.Marshal(args)
	return octest.CallTool + name + " " + string(b)
}

// runWorker starts a worker with the calls as its prompt and waits for
// its turn; it returns the worker and the result's tool states
// ("write:error", …).
func runWorker(t *testing.T, p *Plugin, auth plugin.Authority, calls ...string) (string, []string) {
	t.Helper()
	prompt, _ := json.Marshal(strings.Join(calls, "\n"))
	out := callOK(t, p, auth, ToolWorker, fmt.Sprintf(`{"action":"start","prompt":%s}`, prompt))
	id := str(out, "worker", "workerID")
	w := callOK(t, p, auth, ToolWorker, fmt.Sprintf(`{"action":"wait","workerID":%q,"timeoutMs":60000}`, id))
	if str(w, "result", "state") != TurnCompleted {
		t.Fatalf("worker turn = %v", w)
	}
	var tools []string
	ts, _ := dig(w, "result", "tools").([]any)
	for _, s := range ts {
		tools = append(tools, s.(string))
	}
	return id, tools
}

// A worker edits files with OpenCode's own tools, which geturl's file
// checks never see; its ceiling must keep version-control metadata out of
// reach as the file tools do, or a session without the terminal could
// write .git/config (core.fsmonitor) and so run commands.
func TestRealServerVCS(t *testing.T) {
	srv := octest.Start(t, octest.Options{})
	if out, err := exec.Command("git", "init", "-q", srv.Project).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	config := filepath.Join(srv.Project, ".git", "config")
	orig, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	// A hostile repository may hold a symlink to its own metadata.
	if err := os.Symlink(".git", filepath.Join(srv.Project, "meta")); err != nil {
		t.Fatal(err)
	}
	const evil = "[core]\n\tfsmonitor = touch pwned\n"
	in := func(rel string) string { return filepath.Join(srv.Project, rel) }
	unchanged := func(t *testing.T) {
		t.Helper()
		if b, _ := os.ReadFile(config); !bytes.Equal(b, orig) {
			t.Fatalf(".git/config changed to %q", b)
		}
	}
	p := realPlugin(t, srv.URL, nil)
	full := plugin.Authority{Root: srv.Project, Write: true, Terminal: true}
	writeOnly := plugin.Authority{Root: srv.Project, Write: true}

	t.Run("write-only worker gets no edit tools", func(t *testing.T) {
		before := len(srv.Provider.Requests())
		_, tools := runWorker(t, p, writeOnly,
			toolCall("write", map[string]any{"filePath": config, "content": evil}),
			toolCall("edit", map[string]any{"filePath": config, "oldString": "[core]", "newString": evil}),
			toolCall("write", map[string]any{"filePath": in("meta/config"), "content": evil}),
			toolCall("write", map[string]any{"filePath": in("notes.txt"), "content": "x"}))
		unchanged(t)
		if len(tools) != 0 {
			t.Errorf("tools ran: %v", tools)
		}
		for _, r := range srv.Provider.Requests()[before:] {
			for _, name := range []string{"edit", "write", "apply_patch", "bash"} {
				if r.HasTool(name) {
					t.Errorf("a write-only worker was offered %s", name)
				}
			}
		}
	})

	t.Run("write and terminal: metadata denied by path", func(t *testing.T) {
		denied := []string{".git/config", ".GIT/config", ".git./config", "sub/.git", "GIT~1/config", ".hg/hgrc", "a/.Svn/entries"}
		var calls []string
		for _, rel := range denied {
			calls = append(calls, toolCall("write", map[string]any{"filePath": in(rel), "content": evil}))
		}
		calls = append(calls, toolCall("edit", map[string]any{"filePath": config, "oldString": "[core]", "newString": evil}))
		allowed := []string{".gitignore", ".github/workflows/ci.yml", "src/main.go"}
		for _, rel := range allowed {
			calls = append(calls, toolCall("write", map[string]any{"filePath": in(rel), "content": "ok\n"}))
		}
		id, tools := runWorker(t, p, full, calls...)
		want := slices.Repeat([]string{"write:error"}, len(denied))
		want = append(want, "edit:error")
		want = append(want, slices.Repeat([]string{"write:completed"}, len(allowed))...)
		if !slices.Equal(tools, want) {
			t.Errorf("tools = %v, want %v", tools, want)
		}
		unchanged(t)
		for _, rel := range denied[1:] {
			if _, err := os.Lstat(in(rel)); err == nil {
				t.Errorf("%s was created", rel)
			}
		}
		for _, rel := range allowed {
			if b, err := os.ReadFile(in(rel)); err != nil || string(b) != "ok\n" {
				t.Errorf("%s: %q %v", rel, b, err)
			}
		}
		// Another turn of the same caller leaves the rules as they are.
		c := callOK(t, p, full, ToolWorker, fmt.Sprintf(`{"action":"continue","workerID":%q,"prompt":"again"}`, id))
		callOK(t, p, full, ToolWorker, fmt.Sprintf(`{"action":"wait","workerID":%q,"messageID":%q,"timeoutMs":60000}`, id, str(c, "admitted", "messageID")))
		resp, err := http.Get(srv.URL + "/session/" + id + "?directory=" + srv.Project)
		if err != nil {
			t.Fatal(err)
		}
		var s ocSession
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err != nil || !slices.Equal(s.Permission, Ceiling(full, false)) {
			t.Fatalf("worker rules after two turns: %d (%v), want the %d of one ceiling", len(s.Permission), err, len(Ceiling(full, false)))
		}
	})

	t.Run("granting an edit needs the terminal too", func(t *testing.T) {
		// A session of the user's whose rules ask before every edit.
		body, _ := json.Marshal(map[string]any{"title": "careful user",
			"permission": []Rule{{Permission: "edit", Pattern: "*", Action: "ask"}}})
		resp, err := http.Post(srv.URL+"/session?directory="+srv.Project, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var s struct{ ID string }
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err != nil || s.ID == "" {
			t.Fatalf("create session: %v", err)
		}
		prompt, _ := json.Marshal(map[string]any{"parts": []any{map[string]any{"type": "text",
			"text": toolCall("write", map[string]any{"filePath": in("asked.txt"), "content": "granted\n"})}}})
		resp, err = http.Post(srv.URL+"/session/"+s.ID+"/prompt_async?directory="+srv.Project, "application/json", bytes.NewReader(prompt))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var reqID string
		deadline := time.Now().Add(60 * time.Second)
		for reqID == "" && time.Now().Before(deadline) {
			l := callOK(t, p, writeOnly, ToolRequest, fmt.Sprintf(`{"action":"list","sessionID":%q}`, s.ID))
			if reqID = str(l, "permissions", 0, "requestID"); reqID == "" {
				time.Sleep(100 * time.Millisecond)
			} else if str(l, "permissions", 0, "permission") != "edit" || dig(l, "permissions", 0, "approvable") != false {
				t.Fatalf("wall = %v", l)
			}
		}
		if reqID == "" {
			t.Fatal("no edit request appeared")
		}
		for _, reply := range []string{"once", "always"} {
			e := callErr(t, p, writeOnly, ToolRequest, fmt.Sprintf(`{"action":"reply_permission","requestID":%q,"reply":%q}`, reqID, reply))
			if e.Code != CodeForbidden {
				t.Fatalf("%s by a write-only caller: %v", reply, e)
			}
		}
		callOK(t, p, full, ToolRequest, fmt.Sprintf(`{"action":"reply_permission","requestID":%q,"reply":"once"}`, reqID))
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if b, _ := os.ReadFile(in("asked.txt")); string(b) == "granted\n" {
				return
			}
		}
		t.Fatal("the granted edit did not land")
	})
}
