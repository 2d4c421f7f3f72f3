package geturl

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/control"
)

// uiCall calls the control page's API as its script does (the session
// header, the page's own Origin) and returns the status and the answer.
func (b *bridge) uiCall(t *testing.T, sess, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = strings.NewReader(string(j))
	}
	req, _ := http.NewRequest(method, b.controlURL(path), rd)
	req.Header.Set(control.SessionHeader, sess)
	req.Header.Set("Origin", b.controlURL(""))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, ans
}

// The bridges opt-in through the control page's API, by the CLI's rules:
// refused without write (the server's code and message come back for the
// page to show), granted with it, revoked with write; and wherever the page
// and the keyed API show a session's write and terminal, they show its
// bridges too.
func TestControlPageBridgesOptIn(t *testing.T) {
	b := startBridge(t, nil)
	sess := b.uiLogin(t)
	dir := filepath.Join(b.Dirs.Home, "app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	refused := func(what string, code int, ans map[string]any) {
		t.Helper()
		msg, _ := ans["message"].(string)
		if code != http.StatusBadRequest || ans["ok"] != false || ans["error"] != "bridges_need_write" || !strings.Contains(msg, "write") {
			t.Fatalf("%s: %d %v, want 400 bridges_need_write with a message", what, code, ans)
		}
	}
	// state is the page's view of project "app" and its first session.
	state := func() (proj, session map[string]any) {
		t.Helper()
		code, st := b.uiCall(t, sess, "GET", "/ui/api/state", nil)
		if code != http.StatusOK {
			t.Fatalf("state: %d %v", code, st)
		}
		for _, p := range st["projects"].([]any) {
			if p := p.(map[string]any); p["name"] == "app" {
				proj = p
			}
		}
		if ss := st["sessions"].([]any); len(ss) > 0 {
			session = ss[0].(map[string]any)
		}
		return proj, session
	}

	code, ans := b.uiCall(t, sess, "POST", "/ui/api/projects", map[string]any{"dir": dir, "name": "app", "bridges": true})
	refused("adding a project with bridges and no write", code, ans)
	code, ans = b.uiCall(t, sess, "POST", "/ui/api/projects", map[string]any{"dir": dir, "name": "app"})
	if code != http.StatusOK {
		t.Fatalf("adding a read-only project: %d %v", code, ans)
	}
	code, ans = b.uiCall(t, sess, "POST", "/ui/api/projects/app", map[string]any{"bridges": true})
	refused("bridges on a project without write", code, ans)
	if p, _ := state(); p["bridges"] != false {
		t.Fatalf("a refused opt-in left the project %v", p)
	}

	code, ans = b.uiCall(t, sess, "POST", "/ui/api/projects/app", map[string]any{"write": true})
	if code != http.StatusOK {
		t.Fatalf("write on: %d %v", code, ans)
	}
	code, ans = b.uiCall(t, sess, "POST", "/ui/api/sessions", map[string]any{"project": "app"})
	if s, _ := ans["session"].(map[string]any); code != http.StatusOK || s["bridges"] != false || s["write"] != true {
		t.Fatalf("a session of a project without bridges: %d %v", code, ans)
	}
	code, ans = b.uiCall(t, sess, "POST", "/ui/api/projects/app", map[string]any{"bridges": true})
	if p, _ := ans["project"].(map[string]any); code != http.StatusOK || p["bridges"] != true {
		t.Fatalf("bridges on with write: %d %v", code, ans)
	}
	p, s := state()
	if p["bridges"] != true || s == nil || s["bridges"] != true || s["write"] != true {
		t.Fatalf("after the opt-in the page shows project %v, session %v", p, s)
	}
	var keyed struct{ Sessions []control.SessionInfo }
	b.call(t, "GET", "/api/sessions", nil, &keyed)
	if len(keyed.Sessions) != 1 || !keyed.Sessions[0].Bridges {
		t.Fatalf("the keyed API's sessions: %+v", keyed.Sessions)
	}

	code, ans = b.uiCall(t, sess, "POST", "/ui/api/projects/app", map[string]any{"write": false})
	if code != http.StatusOK {
		t.Fatalf("write off: %d %v", code, ans)
	}
	if p, s := state(); p["bridges"] != false || s["bridges"] != false {
		t.Fatalf("revoking write left project %v, session %v", p, s)
	}
}
