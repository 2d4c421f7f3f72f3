package hubmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
	"github.com/hubdev/hub/registry"
	"github.com/hubdev/hub/stitchslop"
	"github.com/hubdev/hub/supervisor"
)

const (
	testOrigin  = "https://www.stitchslop.test"
	testWebsite = "https://pixelle.example"
	wait        = 10 * time.Second // bounds a broken test; nothing is timed
)

// testHub is a hub run in-process the way `hub run` runs one: the
// supervisor with the real adapters, its state file and lock, and its
// control endpoint.
type testHub struct {
	t      testing.TB
	dirs   hub.Dirs
	sup    *supervisor.Supervisor
	st     *supervisor.State
	cancel context.CancelFunc
	done   chan struct{}
}

// hubConfig enables the named bridges on ports the OS picks.
func hubConfig(t testing.TB, enable ...string) string {
	on := map[string]bool{}
	for _, n := range enable {
		on[n] = true
	}
	var b strings.Builder
	b.WriteString("lifecycle:\n  no_page_minutes: 0\n  agent_idle_minutes: 0\nadapters:\n")
	fmt.Fprintf(&b, "  stitchslop:\n    enabled: %v\n    origin: %s\n    ports: [0]\n", on["stitchslop"], testOrigin)
	fmt.Fprintf(&b, "  aiui:\n    enabled: %v\n    port: 0\n", on["aiui"])
	if on["pixelle"] {
		fmt.Fprintf(&b, "  pixelle:\n    website: %s\n    port: 0\n", testWebsite)
	} else {
		b.WriteString("  pixelle:\n    enabled: true\n    port: 0\n") // no website: waits for the user
	}
	b.WriteString("  geturl:\n    enabled: false\n")
	path := filepath.Join(t.TempDir(), "hub.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func startHub(t testing.TB, dirs hub.Dirs, cfgPath string) *testHub {
	t.Helper()
	lock, err := supervisor.AcquireLock(dirs.State)
	if err != nil {
		t.Fatal(err)
	}
	return startHubLocked(t, dirs, cfgPath, lock)
}

// startHubLocked is startHub for a hub that took the state dir's lock
// already (it was starting).
func startHubLocked(t testing.TB, dirs hub.Dirs, cfgPath string, lock *supervisor.Lock) *testHub {
	t.Helper()
	return startHubOf(t, dirs, cfgPath, lock, registry.New())
}

// startHubOf is startHubLocked for a hub whose bridges are reg's.
func startHubOf(t testing.TB, dirs hub.Dirs, cfgPath string, lock *supervisor.Lock, reg *adapters.Registry) *testHub {
	t.Helper()
	cfg, err := supervisor.LoadConfig(cfgPath, reg)
	if err != nil {
		t.Fatal(err)
	}
	log := adaptertest.Logger(t)
	sup, err := supervisor.New(supervisor.Options{Config: cfg, Dirs: dirs, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ln, port, err := hub.Listen([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &testHub{t: t, dirs: dirs, sup: sup, cancel: cancel, done: make(chan struct{})}
	h.st = &supervisor.State{PID: os.Getpid(), Control: fmt.Sprintf("http://127.0.0.1:%d", port), Key: hub.RandomToken(32),
		Started: time.Now(), Config: cfgPath}
	ctl := &supervisor.Control{Key: h.st.Key, Port: port,
		Status: func() any {
			doc := *h.st
			doc.Key, doc.Adapters = "", sup.Status()
			return hubStatus{State: doc, Running: true}
		},
		Stop:   cancel,
		Attach: sup.Lifecycle().Reporter("hub").AgentAttached,
	}
	ctlDone := make(chan struct{})
	go func() { hub.ServeHTTP(ctx, ln, ctl, nil, log); close(ctlDone) }()
	ready := make(chan struct{})
	go func() {
		defer close(h.done)
		err := sup.Serve(ctx, func(st []adapters.Status) {
			h.st.Adapters = st
			supervisor.WriteState(dirs.State, h.st)
			close(ready)
		})
		if err != nil {
			t.Errorf("hub: %v", err)
		}
		supervisor.RemoveStateIfOurs(dirs.State, h.st.PID)
		lock.Release()
		<-ctlDone
	}()
	select {
	case <-ready:
	case <-h.done:
		t.Fatal("the hub did not start")
	}
	t.Cleanup(h.stop)
	return h
}

// stop stops the hub as `hub stop` would, and waits for it.
func (h *testHub) stop() {
	h.cancel()
	select {
	case <-h.done:
	case <-time.After(3 * wait):
		h.t.Error("the hub did not stop")
	}
}

// port is the named adapter's first port.
func (h *testHub) port(name string) int {
	for _, a := range h.sup.Status() {
		if a.Name == name && len(a.Ports) > 0 {
			return a.Ports[0]
		}
	}
	h.t.Fatalf("%s has no port", name)
	return 0
}

// ssPage pairs a scripted Stitch Slop page with the hub's bridge (arming a
// token as `hub stitchslop pair` does) and answers its commands.
func (h *testHub) ssPage(tools ...string) *adaptertest.WSClient {
	h.t.Helper()
	port := h.port("stitchslop")
	r, err := stitchslop.OpenRemote(context.Background(), hub.ExpandHome(stitchslop.DefaultConfigDir, h.dirs.Home), port)
	if err != nil {
		h.t.Fatal(err)
	}
	defer r.Close()
	tok := "tok_" + hub.RandomHex(8)
	if err := r.Pair(context.Background(), tok); err != nil {
		h.t.Fatal(err)
	}
	c, err := adaptertest.Dial(fmt.Sprintf("ws://127.0.0.1:%d/", port), adaptertest.DialOptions{Origin: testOrigin})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(c.Close)
	c.SendText(`{"token":"` + tok + `"}`)
	if m, err := c.Next(wait); err != nil || !strings.Contains(m.Text(), `"hello"`) {
		h.t.Fatalf("page handshake: %v %s", err, m.Text())
	}
	var named []map[string]string
	for _, n := range tools {
		named = append(named, map[string]string{"name": n})
	}
	list, _ := json.Marshal(map[string]any{"tools": named})
	c.SendText(string(list))
	go answerPage(c)
	return c
}

// answerPage answers every command: render with a PNG data URL, anything
// else with a say line and the command echoed.
func answerPage(c *adaptertest.WSClient) {
	for {
		m, err := c.Next(time.Hour)
		if err != nil {
			return
		}
		var f map[string]any
		if json.Unmarshal(m.Data, &f) != nil || f["id"] == nil {
			continue
		}
		reply := map[string]any{"id": f["id"], "ok": true, "say": "Two objects on the hoop.", "command": f["command"], "args": f["args"]}
		if f["command"] == "render" {
			reply = map[string]any{"id": f["id"], "ok": true, "dataUrl": "data:image/png;base64,UE5HREFUQQo="}
		}
		b, _ := json.Marshal(reply)
		c.SendText(string(b))
	}
}

// session is one `hub mcp` run in-process over pipes.
type session struct {
	t *testing.T
	*adaptertest.MCPClient
	init map[string]any // the initialize result
	done chan struct{}
	err  error
}

func runFace(t *testing.T, o Options) *session {
	t.Helper()
	if o.Log == nil {
		o.Log = adaptertest.Logger(t)
	}
	if o.Retry == 0 {
		o.Retry = 20 * time.Millisecond
	}
	if o.ListChangedDelay == 0 {
		o.ListChangedDelay = time.Millisecond
	}
	if o.Registry == nil {
		o.Registry = registry.New()
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, MCPClient: adaptertest.NewMCPClient(inW, outR), done: make(chan struct{})}
	go func() {
		s.err = Run(context.Background(), &mcpserver.LineTransport{In: inR, Out: outW}, o)
		outW.Close()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.Close()
		select {
		case <-s.done:
		case <-time.After(3 * wait):
			t.Error("hub mcp did not exit")
		}
		if err := s.CheckOutput(); err != nil {
			t.Error(err)
		}
	})
	var err error
	if s.init, err = s.Initialize("2025-06-18", 3*wait); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *session) tools() string {
	s.t.Helper()
	names, err := s.ToolNames(wait)
	if err != nil {
		s.t.Fatal(err)
	}
	return names
}

func (s *session) tool(name string, args any) adaptertest.ToolResult {
	s.t.Helper()
	res, err := s.Tool(name, args, wait)
	if err != nil {
		s.t.Fatal(err)
	}
	return res
}

func (s *session) note(method string) map[string]any {
	s.t.Helper()
	m, err := s.Note(method, wait)
	if err != nil {
		s.t.Fatal(err)
	}
	return m
}

// eventually retries cond until it holds, for what arrives on its own
// (a page's tools after its list).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	adaptertest.WaitFor(t, what, cond)
}
