package geturl

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/geturl/control"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/hub"
)

type bridge struct {
	*adaptertest.Harness
	s    *Server
	cl   *Client
	ckey string // the control plane's key, as the control file gave it at start
}

// sessionAnswer is what the CLI's session commands print with --json.
type sessionAnswer struct {
	Session control.SessionInfo `json:"session"`
}

// key is the control plane's key, as the control file gave it to the CLI.
func (b *bridge) key() string { return b.ckey }

func startBridge(t *testing.T, tune func(*Config)) *bridge {
	t.Helper()
	cfg := NewConfig()
	cfg.Port, cfg.ControlPort = 0, 0
	if tune != nil {
		tune(cfg)
	}
	s := New(cfg)
	h := adaptertest.Start(t, s, adaptertest.Options{})
	cl, err := Locate(h.Dirs)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := control.ReadFile(h.Dirs)
	if err != nil {
		t.Fatal(err)
	}
	return &bridge{Harness: h, s: s, cl: cl, ckey: cf.Key}
}

func (b *bridge) controlURL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(b.Ports[1]) + path
}

func (b *bridge) call(t *testing.T, method, path string, body, out any) {
	t.Helper()
	if err := b.cl.Do(context.Background(), method, path, body, out); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
}

func (b *bridge) project(t *testing.T, dir, name string, write bool) {
	t.Helper()
	b.call(t, "POST", "/api/projects", map[string]any{"dir": dir, "name": name, "write": write}, nil)
}

func (b *bridge) newSession(t *testing.T, project string) control.SessionInfo {
	t.Helper()
	var ans sessionAnswer
	b.call(t, "POST", "/api/sessions", map[string]any{"project": project}, &ans)
	return ans.Session
}

// get fetches a data-plane URL (as the agent would) and returns the status
// and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, sb.String()
}

// initBases fetches an Init URL and returns its bases.
func initBases(t *testing.T, initURL string) (r, m string) {
	t.Helper()
	code, body := get(t, initURL)
	if code != 200 {
		t.Fatalf("init: %d %s", code, body)
	}
	var v struct {
		Bases struct{ R, M string }
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	return v.Bases.R, v.Bases.M
}

// The operator's loop end to end: register a root, mint a session, the
// agent bootstraps from the Init URL alone and reads a file; rotation,
// stop and start change the URLs and old ones become the same opaque 404
// as a token that never existed.
func TestOperatorFlow(t *testing.T) {
	b := startBridge(t, nil)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hi there\n"), 0o644)
	b.project(t, root, "demo", true)
	s := b.newSession(t, "demo")
	if !strings.HasPrefix(s.InitURL, "http://127.0.0.1:"+strconv.Itoa(b.Port())+"/v0/init/") || !strings.Contains(s.Prompt, s.InitURL) {
		t.Fatalf("session %+v", s)
	}
	r, m := initBases(t, s.InitURL)
	if m == "" {
		t.Fatal("a writable project's session has no mutation base")
	}
	code, body := get(t, r+"/r?path=hello.txt")
	if code != 200 || !strings.Contains(body, `"content":"hi there\n"`) {
		t.Fatalf("read: %d %s", code, body)
	}
	_, never := get(t, "http://127.0.0.1:"+strconv.Itoa(b.Port())+"/v0/init/ZZZZZZZZ")

	var rot sessionAnswer
	b.call(t, "POST", "/api/sessions/"+s.ID+"/rotate", nil, &rot)
	for _, old := range []string{s.InitURL, r + "/r?path=hello.txt"} {
		if code, body := get(t, old); code != 404 || body != never {
			t.Fatalf("old URL after rotate: %d %q, want the opaque 404 %q", code, body, never)
		}
	}
	r2, _ := initBases(t, rot.Session.InitURL)

	b.call(t, "POST", "/api/sessions/"+s.ID+"/stop", nil, nil)
	if code, _ := get(t, r2+"/r?path=hello.txt"); code != 404 {
		t.Fatalf("stopped session still answers: %d", code)
	}
	var started sessionAnswer
	b.call(t, "POST", "/api/sessions/"+s.ID+"/start", nil, &started)
	if started.Session.InitURL == "" || started.Session.InitURL == rot.Session.InitURL {
		t.Fatalf("start gave %q", started.Session.InitURL)
	}
	if st := b.s.Status(); len(st.Ports) != 2 || st.AgentSessions != 1 || st.LastActivity.IsZero() {
		t.Fatalf("status %+v", st)
	}
	if !b.Lifecycle.Activity("geturl").PageEverAttached {
		t.Fatal("an authenticated agent request did not count as a client attaching")
	}
	// Tokens never reach the log.
	for _, u := range []string{s.InitURL, rot.Session.InitURL, r, r2} {
		tok := u[strings.LastIndex(u, "/")+1:]
		if strings.Contains(b.Logs(), tok) {
			t.Fatalf("token %s logged", tok)
		}
	}
}

// A read-only session has no mutation base, and a symlink inside the
// project that points outside it is refused.
func TestReadOnlySessionAndSymlinkEscape(t *testing.T) {
	b := startBridge(t, nil)
	root, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("top secret"), 0o600)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "leak"))
	os.Symlink(outside, filepath.Join(root, "dirleak"))
	b.project(t, root, "ro", false)
	_, m := initBases(t, b.newSession(t, "ro").InitURL)
	if m != "" {
		t.Fatalf("read-only session got a mutation base %q", m)
	}
	r, _ := initBases(t, b.newSession(t, "ro").InitURL)
	for _, p := range []string{"leak", "dirleak/secret", "../" + filepath.Base(outside) + "/secret", outside + "/secret"} {
		_, body := get(t, r+"/r?path="+p)
		// The answer may echo what the agent asked for, never more.
		if strings.Contains(body, "top secret") || !strings.HasPrefix(p, "/") && strings.Contains(body, outside) {
			t.Fatalf("%s escaped the sandbox: %s", p, body)
		}
		if !strings.Contains(body, `"error"`) {
			t.Fatalf("%s: no error in %s", p, body)
		}
	}
}

// The control plane refuses pages (any Origin, even with the key), other
// Hosts, and missing or wrong keys.
func TestControlPlaneChecks(t *testing.T) {
	b := startBridge(t, nil)
	for name, tc := range map[string]struct {
		origin, host, key string
		want              int
	}{
		"ok":                   {"", "", b.key(), 200},
		"origin with the key":  {"http://127.0.0.1:" + strconv.Itoa(b.Ports[1]), "", b.key(), 403},
		"rebound host":         {"", "evil.example:" + strconv.Itoa(b.Ports[1]), b.key(), 403},
		"no key":               {"", "", "", 401},
		"wrong key":            {"", "", b.key() + "x", 401},
		"data-plane host name": {"", "127.0.0.1:" + strconv.Itoa(b.Port()), b.key(), 403},
	} {
		req, _ := http.NewRequest("GET", b.controlURL("/api/projects"), nil)
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.key != "" {
			req.Header.Set(control.KeyHeader, tc.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", name, resp.StatusCode, tc.want)
		}
	}
	if m := adaptertest.FileMode(t, control.FilePath(b.Dirs)); m != 0o600 {
		t.Fatalf("control file mode %v", m)
	}
	if m := adaptertest.FileMode(t, StateDir(b.Dirs)); m != 0o700 {
		t.Fatalf("state dir mode %v", m)
	}
}

// A restart of the adapter by the supervisor (a second Serve on the same
// Server) keeps every live URL valid; a control file is removed on stop.
func TestRestartKeepsSessions(t *testing.T) {
	b := startBridge(t, nil)
	b.project(t, t.TempDir(), "p", false)
	s := b.newSession(t, "p")
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(control.FilePath(b.Dirs)); !os.IsNotExist(err) {
		t.Fatalf("control file left after stop: %v", err)
	}
	h2 := adaptertest.Start(t, b.s, adaptertest.Options{})
	url := strings.Replace(s.InitURL, ":"+strconv.Itoa(b.Port())+"/", ":"+strconv.Itoa(h2.Port())+"/", 1)
	if code, body := get(t, url); code != 200 {
		t.Fatalf("the session's Init URL after a restart: %d %s", code, body)
	}
}

// Config projects are registered at start; a public origin shapes the
// Init URL, and the data plane answers that Host.
func TestConfigProjectsAndPublicOrigin(t *testing.T) {
	root := t.TempDir()
	b := startBridge(t, func(c *Config) {
		c.PublicOrigin = "https://tunnel.example"
		c.Projects = []ProjectConfig{{Name: "cfg", Root: root, Write: true}}
	})
	s := b.newSession(t, "cfg")
	if !strings.HasPrefix(s.InitURL, "https://tunnel.example/v0/init/") {
		t.Fatalf("init URL %q", s.InitURL)
	}
	req, _ := http.NewRequest("GET", "http://127.0.0.1:"+strconv.Itoa(b.Port())+strings.TrimPrefix(s.InitURL, "https://tunnel.example"), nil)
	req.Host = "tunnel.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("init through the public Host: %d", resp.StatusCode)
	}
	_ = hub.LoopbackHost
}

// A bad opencode value hub.yaml left out came from the environment, and
// the error says so: the file has no such key to fix.
func TestConfigValidateNamesTheEnvironment(t *testing.T) {
	t.Setenv("GETMCP_OPENCODE_MAX_WORKERS", "99")
	err := NewConfig().Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "opencode.max_workers (from $GETMCP_OPENCODE_MAX_WORKERS): must be 1..16") {
		t.Fatalf("error %v, want one naming GETMCP_OPENCODE_MAX_WORKERS", err)
	}
	c := NewConfig()
	c.OpenCode.set = map[string]bool{"max_workers": true}
	c.OpenCode.MaxWorkers = 17
	if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "opencode.max_workers: must be") {
		t.Fatalf("a value written in hub.yaml: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		tune func(*Config)
		want string
	}{
		"same ports":    {func(c *Config) { c.ControlPort = c.Port }, "control_port"},
		"bad origin":    {func(c *Config) { c.PublicOrigin = "tunnel.example" }, "public_origin"},
		"relative root": {func(c *Config) { c.Projects = []ProjectConfig{{Name: "a", Root: "src"}} }, "projects[0].root"},
		"no name":       {func(c *Config) { c.Projects = []ProjectConfig{{Root: "/tmp"}} }, "projects[0].name"},
		"bad name":      {func(c *Config) { c.Projects = []ProjectConfig{{Name: "my web", Root: "/tmp"}} }, "projects[0].name"},
		"long name": {func(c *Config) {
			c.Projects = []ProjectConfig{{Name: strings.Repeat("a", 41), Root: "/tmp"}}
		}, "projects[0].name"},
		"dup name": {func(c *Config) {
			c.Projects = []ProjectConfig{{Name: "a", Root: "/tmp"}, {Name: "a", Root: "/srv"}}
		}, "projects[1].name"},
		"bridges without write": {func(c *Config) {
			c.Projects = []ProjectConfig{{Name: "a", Root: "/tmp", Write: true, Bridges: true}, {Name: "b", Root: "/tmp", Terminal: true, Bridges: true}}
		}, "projects[1].bridges: needs write"},
	} {
		c := NewConfig()
		tc.tune(c)
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error about %s", name, err, tc.want)
		}
	}
	if err := NewConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

// A managed Quick Tunnel (a fake cloudflared that prints what the real one
// prints): started from the page, it becomes the Init URLs' origin and a
// Host the data plane answers; stopped, Init URLs are local again.
func TestQuickTunnelFromThePage(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cloudflared"), []byte(`#!/bin/sh
echo '2026-12-01T10:00:01Z INF |  https://quick-test-tunnel.trycloudflare.com                                      |' >&2
exec sleep 300
`), 0o755)
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	b := startBridge(t, nil)
	b.project(t, t.TempDir(), "p", false)
	b.newSession(t, "p")
	sess := b.uiLogin(t)
	own := "http://127.0.0.1:" + strconv.Itoa(b.Ports[1])
	post := func(path string) {
		req, _ := http.NewRequest("POST", b.controlURL(path), strings.NewReader("{}"))
		req.Header.Set("Origin", own)
		req.Header.Set(control.SessionHeader, sess)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("POST %s: %v %v", path, resp, err)
		}
		resp.Body.Close()
	}
	post("/ui/api/tunnel/start")
	var ans struct{ Sessions []control.SessionInfo }
	b.call(t, "GET", "/api/sessions", nil, &ans)
	init := ans.Sessions[0].InitURL
	if !strings.HasPrefix(init, "https://quick-test-tunnel.trycloudflare.com/v0/init/") {
		t.Fatalf("Init URL with a tunnel: %q", init)
	}
	if st := b.s.Status(); !strings.Contains(st.Note, "tunnel: https://quick-test-tunnel.trycloudflare.com") {
		t.Fatalf("status note %q", st.Note)
	}
	req, _ := http.NewRequest("GET", "http://127.0.0.1:"+strconv.Itoa(b.Port())+strings.TrimPrefix(init, "https://quick-test-tunnel.trycloudflare.com"), nil)
	req.Host = "quick-test-tunnel.trycloudflare.com"
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("init through the tunnel's Host: %v %v", resp, err)
	}
	resp.Body.Close()
	post("/ui/api/tunnel/stop")
	b.call(t, "GET", "/api/sessions", nil, &ans)
	if !strings.HasPrefix(ans.Sessions[0].InitURL, "http://127.0.0.1:") {
		t.Fatalf("Init URL after the tunnel stopped: %q", ans.Sessions[0].InitURL)
	}
}

// The longest project name still keeps a mutation-enabled Init within the
// contract's 1.6 KiB on the local origin.
func TestInitSizeWithLongestName(t *testing.T) {
	b := startBridge(t, nil)
	name := strings.Repeat("n", 40)
	b.project(t, t.TempDir(), name, true)
	b.call(t, "POST", "/api/projects/"+name, map[string]any{"terminal": true}, nil)
	s := b.newSession(t, name)
	_, body := get(t, s.InitURL)
	if len(body) > 1638 {
		t.Fatalf("Init is %d bytes with a 40-character project name, over 1.6 KiB:\n%s", len(body), body)
	}
	if _, err := b.s.mgr.AddProject(t.TempDir(), strings.Repeat("n", 41), route.Permissions{}); err == nil {
		t.Fatal("a 41-character name was accepted")
	}
}

// The status note's remarks stay apart: with no project and no way to a
// public origin, `hub status` says both, "; "-separated.
func TestStatusNoteJoinsRemarks(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no cloudflared
	b := startBridge(t, nil)
	want := "no projects: run 'hub geturl project add DIR'; Init URLs are local only (no public_origin; cloudflared not installed)"
	if got := b.s.Status().Note; got != want {
		t.Fatalf("note %q, want %q", got, want)
	}
}

// geturl recovers an interrupted patch at start only from a log signed
// with its own key, kept in its private state directory across restarts.
// A log the project brought (a cloned repository can ship one, with the
// "backup" it names) is not followed: the user's file stays as it is.
func TestStartFollowsOnlyItsOwnCrashLog(t *testing.T) {
	root := t.TempDir()
	tune := func(c *Config) { c.Projects = []ProjectConfig{{Name: "p", Root: root, Write: true}} }
	b := startBridge(t, tune)
	keyPath := filepath.Join(StateDir(b.Dirs), "crashlog.key")
	key, err := hub.ReadPrivateFile(keyPath, 64)
	if err != nil || len(key) != 32 {
		t.Fatalf("the key file: %d bytes, %v", len(key), err)
	}
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	for rel, data := range map[string]string{
		".env":                         "SECRET=mine\n",
		".geturl-bak-0123456789abcdef": "SECRET=theirs\n",
		".geturl-txn.json":             `{"v":1,"steps":[{"kind":"replace","rel":".env","bak":".geturl-bak-0123456789abcdef"}]}`,
	} {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h2 := adaptertest.Start(t, b.s, adaptertest.Options{Dirs: &b.Dirs})
	if got, _ := os.ReadFile(filepath.Join(root, ".env")); string(got) != "SECRET=mine\n" {
		t.Fatalf(".env after the start: %q", got)
	}
	if !strings.Contains(h2.Logs(), "not signed with its key") {
		t.Fatalf("the refused log is not reported:\n%s", h2.Logs())
	}
	if again, _ := hub.ReadPrivateFile(keyPath, 64); string(again) != string(key) {
		t.Fatal("the key changed across a restart: a log written before it would be refused")
	}
}
