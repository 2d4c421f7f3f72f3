package geturl

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/geturl/gateway"
	"github.com/hubdev/hub/geturl/plugin/opencode"
)

func (b *bridge) projectPerm(t *testing.T, dir, name string, write, terminal bool) {
	t.Helper()
	b.call(t, "POST", "/api/projects", map[string]any{"dir": dir, "name": name, "write": write, "terminal": terminal}, nil)
}

type intentAnswer struct {
	OK       bool
	Call     string
	State    string
	Replayed bool
	Poll     string
	Result   json.RawMessage
	raw      string
}

func getIntent(t *testing.T, url string) intentAnswer {
	t.Helper()
	code, body := get(t, url)
	var a intentAnswer
	if err := json.Unmarshal([]byte(body), &a); code != 200 || err != nil {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	for i := 0; i < 60 && (a.State == "pending" || a.State == "running"); i++ {
		_, body = get(t, a.Poll)
		json.Unmarshal([]byte(body), &a)
	}
	a.raw = body
	return a
}

// A supervisor restart of the adapter (a second Serve on the same Server)
// keeps the session generations and so their journals: the same mutation
// URL fetched again after the restart answers the first execution's
// record and runs nothing — a file write and a terminal command alike.
func TestSameURLAfterRestartRunsOnce(t *testing.T) {
	b := startBridge(t, nil)
	root := t.TempDir()
	b.projectPerm(t, root, "p", true, true)
	s := b.newSession(t, "p")
	_, m := initBases(t, s.InitURL)
	write := m + "/w?path=a.txt&wait=1500&raw=hello"
	term := m + "/x?wait=1500&raw=echo+ran+%3E%3E+runs.txt"
	w1, x1 := getIntent(t, write), getIntent(t, term)
	if w1.State != "succeeded" || x1.State != "succeeded" {
		t.Fatalf("%s\n%s", w1.raw, x1.raw)
	}
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("changed by someone"), 0o644)

	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	h2 := adaptertest.Start(t, b.s, adaptertest.Options{})
	moved := func(u string) string {
		return strings.Replace(u, ":"+strconv.Itoa(b.Port())+"/", ":"+strconv.Itoa(h2.Port())+"/", 1)
	}
	w2, x2 := getIntent(t, moved(write)), getIntent(t, moved(term))
	if !w2.Replayed || w2.Call != w1.Call || !x2.Replayed || x2.Call != x1.Call {
		t.Fatalf("after restart:\n%s\n%s", w2.raw, x2.raw)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "changed by someone" {
		t.Fatal("the write ran again after the restart")
	}
	if got, _ := os.ReadFile(filepath.Join(root, "runs.txt")); string(got) != "ran\n" {
		t.Fatalf("the command ran %q", got)
	}
	// The activity view shows the replays (and never the content).
	var replayed int
	for _, e := range b.s.activity.Recent() {
		if e.Replayed && (e.Call == w1.Call || e.Call == x1.Call) {
			replayed++
		}
	}
	if replayed != 2 {
		t.Fatalf("%d replays in the activity view", replayed)
	}
}

// A read-only session has no mutation base, and its mutation attempts on
// the read base are refused without effect or URL.
func TestReadOnlySessionMutations(t *testing.T) {
	b := startBridge(t, nil)
	root := t.TempDir()
	b.projectPerm(t, root, "ro", false, false)
	r, m := initBases(t, b.newSession(t, "ro").InitURL)
	if m != "" {
		t.Fatal(m)
	}
	for _, q := range []string{"/w?path=x&raw=x", "/x?raw=touch+x", "/k?plugin=hub-status&tool=hub_status&raw={}"} {
		_, body := get(t, r+q)
		if strings.HasPrefix(q, "/k") {
			if !strings.Contains(body, `"ok":true`) {
				t.Fatalf("a read plugin call on a read-only session: %s", body)
			}
			continue
		}
		if !strings.Contains(body, `"errorCode":"mutations_disabled"`) || strings.Contains(body, `"repair"`) {
			t.Fatalf("%s: %s", q, body)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "x")); !os.IsNotExist(err) {
		t.Fatal("a read-only session changed the project")
	}
}

type statusHub []adapters.Status

func (f statusHub) Status() []adapters.Status { return f }

func (statusHub) Bridge(string) (adapters.ToolBridge, bool) { return nil, false }

// /k lists the built-in hub-status plugin and the OpenCode plugin; a
// hub-status call reports the hub's adapters, or says geturl runs alone.
// Under a hub each enabled bridge is a plugin too (here aiui, which offers
// no bridge, so it shows as not running). The control page lists the same
// catalog.
func TestPluginsThroughTheAdapter(t *testing.T) {
	for _, tc := range []struct {
		hub     adapters.HubView
		want    string
		plugins string
	}{
		{nil, `"standalone":true`, "hub-status"},
		{statusHub{{Name: "aiui", State: adapters.StateRunning, Ports: []int{8790}}, {Name: "pixelle", State: adapters.StateDisabled}},
			`"name":"aiui","state":"running"`, "hub-status aiui:not running"},
	} {
		cfg := NewConfig()
		cfg.Port, cfg.ControlPort = 0, 0
		cfg.OpenCode.Enabled = false
		s := New(cfg)
		h := adaptertest.Start(t, s, adaptertest.Options{Hub: tc.hub})
		cl, _ := Locate(h.Dirs)
		b := &bridge{Harness: h, s: s, cl: cl}
		b.project(t, t.TempDir(), "p", false)
		r, _ := initBases(t, b.newSession(t, "p").InitURL)
		if _, body := get(t, r+"/k"); !strings.Contains(body, `"id":"hub-status"`) {
			t.Fatal(body)
		}
		if _, body := get(t, r+`/k?plugin=hub-status&tool=hub_status&raw={}`); !strings.Contains(body, tc.want) {
			t.Fatalf("%s", body)
		}
		var ids []string
		for _, p := range s.plugins() {
			if p.ID != "hub-status" {
				p.ID += ":" + p.Status
			}
			ids = append(ids, p.ID)
		}
		if strings.Join(ids, " ") != tc.plugins {
			t.Fatalf("%q", ids)
		}
		h.Stop()
	}
}

// The OpenCode plugin is registered from config and lazy: starting the
// bridge, minting a session and fetching Init never contact OpenCode.
func TestOpenCodeIsLazy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan string, 64) // remote addresses, in accept order
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	b := startBridge(t, func(c *Config) {
		c.OpenCode.URL = "http://" + ln.Addr().String()
	})
	b.project(t, t.TempDir(), "p", false)
	r, _ := initBases(t, b.newSession(t, "p").InitURL)
	if _, body := get(t, r+"/k?plugin=opencode-control"); !strings.Contains(body, `"name":"opencode_worker"`) {
		t.Fatal(body)
	}
	// A sentinel connection queues behind any the bridge made: every
	// connection accepted before it is one the bridge made.
	sentinel, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer sentinel.Close()
	for addr := range accepted {
		if addr == sentinel.LocalAddr().String() {
			break
		}
		t.Fatalf("OpenCode was contacted (from %s) before any tool call", addr)
	}
}

// The opencode section: keys written in hub.yaml win; the environment
// fills the rest; a bad value fails validation with the key.
func TestOpenCodeConfig(t *testing.T) {
	cfg := NewConfig()
	if err := yaml.Load([]byte("opencode:\n  url: http://127.0.0.1:5000\n  max_workers: 3\n"), cfg, yaml.WithKnownFields()); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GETMCP_OPENCODE_URL": "http://127.0.0.1:9999", "GETMCP_OPENCODE_USERNAME": "me", "GETMCP_OPENCODE_MAX_WORKERS": "12"}
	oc, err := cfg.OpenCode.Effective(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if oc.URL != "http://127.0.0.1:5000" || oc.MaxWorkers != 3 || oc.Username != "me" || !oc.Enabled || !oc.AllowExisting {
		t.Fatalf("%+v", oc)
	}
	if err := yaml.Load([]byte("opencode:\n  nope: 1\n"), NewConfig(), yaml.WithKnownFields()); err == nil {
		t.Fatal("unknown key accepted")
	}
	bad := NewConfig()
	bad.OpenCode.URL = "http://example.com"
	if err := bad.Validate(); err == nil || !strings.HasPrefix(err.Error(), "opencode.url") {
		t.Fatal(err)
	}
	t.Setenv("GETMCP_OPENCODE_ENABLED", "false")
	off, _ := NewConfig().OpenCode.Effective(nil)
	if off.Enabled {
		t.Fatal("the environment did not fill enabled")
	}
	if opencode.DefaultURL != NewConfig().OpenCode.URL {
		t.Fatal("default url")
	}
}

// The fully mutation-enabled Init, with the mutation routes served and
// the plugins installed, stays within the spec's 1.6 KiB and advertises
// every mutation route the permissions allow.
func TestInitWithMutationsWithinLimit(t *testing.T) {
	b := startBridge(t, nil)
	b.projectPerm(t, t.TempDir(), "p", true, true)
	s := b.newSession(t, "p")
	_, body := get(t, s.InitURL)
	if len(body) > gateway.MaxInit {
		t.Fatalf("Init is %d bytes, over %d", len(body), gateway.MaxInit)
	}
	for _, ep := range []string{`"write":["m","/w?`, `"edit":["m","/e?`, `"apply_patch":["m","/a?`, `"terminal":["m","/x?`, `"stage":["m","/s?`, `"result":["m","/j?`, `"plugins":["r","/k"]`} {
		if !strings.Contains(body, ep) {
			t.Errorf("Init lacks %s: %s", ep, body)
		}
	}
	t.Logf("Init: %d bytes", len(body))
}
