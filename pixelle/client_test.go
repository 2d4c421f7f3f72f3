package pixelle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

const stateFixture = `{"projectId":"example","title":"Example","revision":4,"selection":["brief"],"nodes":[{"id":"brief","kind":"note","title":"Brief"}],"edges":[]}`

// scriptedBrowser answers routed commands the way the Pixelle page would,
// from fixtures: state.read and selection.read succeed, a mutation whose
// operationId is "conflict" gets REVISION_CONFLICT, and operationId "hang"
// is never answered.
func scriptedBrowser(t *testing.T, b *adaptertest.WSClient) {
	go func() {
		for {
			msg, err := b.Next(time.Minute)
			if err != nil {
				return
			}
			var m struct {
				Type    string
				ID      string
				Command struct {
					Method      string
					OperationID string
				}
			}
			if json.Unmarshal(msg.Data, &m) != nil || m.Type != "command" {
				continue
			}
			var tail string
			switch {
			case m.Command.OperationID == "hang":
				continue
			case m.Command.OperationID == "conflict":
				tail = `"error":{"code":"REVISION_CONFLICT","message":"Read state and rebase.","currentRevision":4}`
			case m.Command.Method == "state.read":
				tail = `"result":` + stateFixture
			case m.Command.Method == "selection.read":
				tail = `"result":{"revision":4,"nodes":[{"id":"brief"}],"missing":[]}`
			default:
				tail = `"result":{"revision":5,"affected":["x"],"operationId":"` + m.Command.OperationID + `"}`
			}
			if b.SendText(fmt.Sprintf(`{"type":"result","id":%q,%s}`, m.ID, tail)) != nil {
				return
			}
		}
	}()
}

// clientSetup is a relay with a scripted browser and a paired client.
func clientSetup(t *testing.T, tune func(*Server)) (*testRelay, *Client, Credentials, *adaptertest.WSClient) {
	t.Helper()
	r := startRelay(t, tune)
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	c := &Client{Relay: r.URL("")}
	cr, err := c.Pair(context.Background(), strings.ToLower(code(t, b)))
	if err != nil {
		t.Fatal(err)
	}
	next(t, b) // paired
	scriptedBrowser(t, b)
	return r, c, cr, b
}

func TestClientCall(t *testing.T) {
	_, c, cr, _ := clientSetup(t, nil)
	if cr.URL != c.Relay {
		t.Fatalf("stored url %q, want %q", cr.URL, c.Relay)
	}
	out, err := c.Call(context.Background(), cr, json.RawMessage(`{"method":"state.read"}`))
	if err != nil || string(out.Result) != stateFixture || out.Error != nil {
		t.Fatalf("state.read: %s %s %v", out.Result, out.Error, err)
	}
	out, err = c.Call(context.Background(), cr, json.RawMessage(`{"method":"nodes.delete","expectedRevision":4,"operationId":"conflict","params":{"ids":["a"]}}`))
	if err != nil || out.ErrorCode() != "REVISION_CONFLICT" || !strings.Contains(string(out.Error), `"currentRevision":4`) {
		t.Fatalf("conflict: %s %v", out.Error, err)
	}
}

func TestClientOutcomeUnknown(t *testing.T) {
	t.Run("relay timeout", func(t *testing.T) {
		_, c, cr, _ := clientSetup(t, func(s *Server) { s.CommandTimeout = 100 * time.Millisecond })
		out, err := c.Call(context.Background(), cr, json.RawMessage(`{"method":"nodes.delete","expectedRevision":4,"operationId":"hang","params":{"ids":["a"]}}`))
		if err != nil || out.ErrorCode() != "OUTCOME_UNKNOWN" {
			t.Fatalf("got %s %v", out.Error, err)
		}
	})
	t.Run("client timeout", func(t *testing.T) {
		_, c, cr, _ := clientSetup(t, nil)
		// Long enough for dial, hello and ready on a loaded machine, so
		// the timeout that fires is the one waiting for the result.
		c.Timeout = time.Second
		_, err := c.Call(context.Background(), cr, json.RawMessage(`{"method":"nodes.delete","expectedRevision":4,"operationId":"hang","params":{"ids":["a"]}}`))
		var ce *ClientError
		if !errors.As(err, &ce) || ce.Code != "OUTCOME_UNKNOWN" || ce.Exit != hub.ExitFailed || !strings.Contains(ce.Message, "same operationId") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestClientErrors(t *testing.T) {
	r, c, cr, b := clientSetup(t, nil)
	bad := cr
	bad.Token = "wrong"
	_, err := c.Call(context.Background(), bad, json.RawMessage(`{"method":"state.read"}`))
	var ce *ClientError
	if !errors.As(err, &ce) || ce.Code != "CREDENTIALS_REJECTED" || strings.Contains(ce.Message, cr.Token) {
		t.Fatalf("bad token: %v", err)
	}
	// Browser gone: the relay's BROWSER_OFFLINE comes through unchanged.
	b.Close()
	adaptertest.WaitFor(t, "the browser's close", func() bool { return !r.s.Status().PageAttached })
	out, err := c.Call(context.Background(), cr, json.RawMessage(`{"method":"state.read"}`))
	if err != nil || out.ErrorCode() != "BROWSER_OFFLINE" {
		t.Fatalf("offline: %s %v", out.Error, err)
	}
	// A closed port is "not reachable".
	dead := &Client{Relay: "http://127.0.0.1:1"}
	for name, f := range map[string]func() error{
		"call":   func() error { _, err := dead.Call(context.Background(), cr, json.RawMessage(`{}`)); return err },
		"pair":   func() error { _, err := dead.Pair(context.Background(), "ABCDEF012345"); return err },
		"health": func() error { _, err := dead.Health(context.Background(), ""); return err },
	} {
		if err := f(); !errors.As(err, &ce) || ce.Exit != hub.ExitNotRunning {
			t.Errorf("%s on a closed port: %v", name, err)
		}
	}
	if _, err := c.Pair(context.Background(), "ABCDEF012345"); !errors.As(err, &ce) || ce.Code != "INVALID_OR_EXPIRED_CODE" || ce.Exit != hub.ExitFailed {
		t.Errorf("bad code: %v", err)
	}
	if _, err := c.Pair(context.Background(), "xyz"); !errors.As(err, &ce) || ce.Exit != hub.ExitUsage {
		t.Errorf("malformed code: %v", err)
	}
}

func TestClientHealth(t *testing.T) {
	r := startRelay(t, nil)
	c := &Client{Relay: r.URL("")}
	rep, err := c.Health(context.Background(), website+"/")
	if err != nil || !rep.OK || !rep.Compatible || rep.OriginAllowed == nil || !*rep.OriginAllowed {
		t.Fatalf("website: %+v %v", rep, err)
	}
	rep, err = c.Health(context.Background(), "https://other.example")
	if err != nil || rep.OK || *rep.OriginAllowed || !rep.Compatible || rep.Version != ProtocolVersion {
		t.Fatalf("other origin: %+v %v", rep, err)
	}
	rep, err = c.Health(context.Background(), "")
	if err != nil || !rep.OK || rep.OriginAllowed != nil {
		t.Fatalf("no origin: %+v %v", rep, err)
	}
	if _, err := c.Health(context.Background(), "not an origin"); err == nil {
		t.Fatal("bad website accepted")
	}
}

func TestParseRelayURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:4317":  "http://127.0.0.1:4317",
		"http://127.0.0.1:4317/": "http://127.0.0.1:4317",
		"http://localhost:4318":  "http://127.0.0.1:4318",
		"ws://127.0.0.1:9":       "http://127.0.0.1:9",
		"http://10.0.0.1:4317":   "",
		"http://example.com:80":  "",
		"https://127.0.0.1:4317": "",
		"http://127.0.0.1":       "",
		"http://127.0.0.1:0":     "",
		"http://u:p@127.0.0.1:1": "",
		"http://127.0.0.1:1/x":   "",
		"http://127.0.0.1:1?t=1": "",
		"127.0.0.1:4317":         "",
		"":                       "",
	} {
		got, err := ParseRelayURL(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("ParseRelayURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestCredentialStore(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	st := NewCredentialStore(dirs)
	if _, err := st.Load(); !errors.Is(err, errNotPaired) {
		t.Fatalf("empty store: %v", err)
	}
	cr := Credentials{SessionID: "s", Token: "t", URL: "http://127.0.0.1:4317"}
	if err := st.Save(cr); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(st.Path(), filepath.Join(dirs.State, "pixelle")+string(filepath.Separator)) {
		t.Fatalf("credentials at %s, not under the state dir", st.Path())
	}
	fi, _ := os.Stat(st.Path())
	di, _ := os.Stat(filepath.Dir(st.Path()))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes file %v dir %v", fi.Mode().Perm(), di.Mode().Perm())
	}
	got, err := st.Load()
	if err != nil || got != cr {
		t.Fatalf("load: %+v %v", got, err)
	}
	os.Chmod(st.Path(), 0o644)
	if _, err := st.Load(); err == nil {
		t.Fatal("a world-readable credentials file was trusted")
	}
	os.WriteFile(st.Path(), []byte("{"), 0o600)
	os.Chmod(st.Path(), 0o600)
	if _, err := st.Load(); err == nil {
		t.Fatal("a damaged file was trusted")
	}
}

func TestVerifyWorkspace(t *testing.T) {
	for _, tc := range []struct {
		name, marker, expect, code string
	}{
		{"ok", `{"version":1,"workspaceId":"ws-1","name":"Demo"}`, "ws-1", ""},
		{"mismatch", `{"version":1,"workspaceId":"ws-2"}`, "ws-1", "WORKSPACE_MISMATCH"},
		{"missing", "", "ws-1", "WORKSPACE_MARKER_MISSING"},
		{"version 1.0", `{"version":1.0,"workspaceId":"ws-1"}`, "ws-1", ""},
		{"version 2", `{"version":2,"workspaceId":"ws-1"}`, "ws-1", "WORKSPACE_MARKER_INVALID"},
		{"version 1.5", `{"version":1.5,"workspaceId":"ws-1"}`, "ws-1", "WORKSPACE_MARKER_INVALID"},
		{"version null", `{"version":null,"workspaceId":"ws-1"}`, "ws-1", "WORKSPACE_MARKER_INVALID"},
		{"version string", `{"version":"1","workspaceId":"ws-1"}`, "ws-1", "WORKSPACE_MARKER_INVALID"},
		{"no version", `{"workspaceId":"ws-1"}`, "ws-1", "WORKSPACE_MARKER_INVALID"},
		{"numeric id", `{"version":1,"workspaceId":1}`, "1", "WORKSPACE_MARKER_INVALID"},
		{"not JSON", `version: 1`, "ws-1", "WORKSPACE_MARKER_INVALID"},
		{"array", `[1]`, "ws-1", "WORKSPACE_MARKER_INVALID"},
		{"huge", `{"version":1,"workspaceId":"ws-1","pad":"` + strings.Repeat("a", 70<<10) + `"}`, "ws-1", "WORKSPACE_MARKER_INVALID"},
		{"no expect", `{"version":1,"workspaceId":"ws-1"}`, "", "USAGE"},
		// The page reads marker.version and marker.workspaceId: exact keys.
		{"keys in other case", `{"Version":1,"WORKSPACEID":"ws-1"}`, "ws-1", "WORKSPACE_MARKER_INVALID"},
		{"exact key beside another case", `{"version":1,"workspaceId":"ws-1","WorkspaceId":"ws-2"}`, "ws-1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, MarkerFile)
			if tc.marker != "" {
				os.WriteFile(path, []byte(tc.marker), 0o644)
			}
			before, _ := os.ReadFile(path)
			ws, err := VerifyWorkspace(dir, tc.expect)
			var ce *ClientError
			switch {
			case tc.code == "" && (err != nil || ws.Directory != dir || !ws.OK):
				t.Fatalf("got %+v %v", ws, err)
			case tc.code != "" && (!errors.As(err, &ce) || ce.Code != tc.code):
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			after, _ := os.ReadFile(path)
			if string(before) != string(after) {
				t.Fatal("the marker changed")
			}
			if _, err := os.Stat(path); tc.marker == "" && err == nil {
				t.Fatal("a marker was created")
			}
		})
	}
}

// TestClientTimeoutOutlastsRelay: agent clients time out later than the
// relay's 12 s command timer (18 s), so the relay's OUTCOME_UNKNOWN is what
// a slow browser produces.
func TestClientTimeoutOutlastsRelay(t *testing.T) {
	if got := (&Client{}).timeout(); got != 18*time.Second || got <= DefaultCommandTimeout {
		t.Fatalf("client timeout %s, want 18s (relay: %s)", got, DefaultCommandTimeout)
	}
	if got := (&Client{Timeout: time.Second}).timeout(); got != time.Second {
		t.Fatalf("override ignored: %s", got)
	}
}
