package supervisor_test

// End to end: each bridge of a real in-process hub as a geturl /k plugin,
// driven through plain GETs the way a URL-reading agent drives it, against
// a scripted page. The hub runs exactly as `hub run` runs it (supervisor,
// real adapters, real listeners); the pages dial the bridges over real
// WebSockets.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui"
	"github.com/hubdev/hub/geturl"
	"github.com/hubdev/hub/geturl/control"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/pixelle"
	"github.com/hubdev/hub/stitchslop"
	"github.com/hubdev/hub/supervisor"
)

const (
	ssOrigin   = "https://www.stitchslop.test"
	pxWebsite  = "https://pixelle.example"
	frameWait  = 10 * time.Second // bounds a broken test; nothing is timed
	mutateWait = "&wait=1500"     // the longest wait a call may ask for
)

// e2eHub is a supervisor serving one bridge and geturl.
type e2eHub struct {
	t    testing.TB
	dirs hub.Dirs
	sup  *supervisor.Supervisor
	http *http.Client
}

func startE2EHub(t testing.TB, bridge string) *e2eHub {
	t.Helper()
	dirs := adaptertest.TempDirs(t)
	if err := os.MkdirAll(filepath.Join(dirs.Home, "proj"), 0o700); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("lifecycle:\n  no_page_minutes: 0\n  agent_idle_minutes: 0\nadapters:\n")
	fmt.Fprintf(&b, "  stitchslop:\n    enabled: %v\n    origin: %s\n    ports: [0]\n    config_dir: ~/.stitchslop\n", bridge == "stitchslop", ssOrigin)
	fmt.Fprintf(&b, "  aiui:\n    enabled: %v\n    port: 0\n", bridge == "aiui")
	fmt.Fprintf(&b, "  pixelle:\n    enabled: %v\n    website: %s\n    port: 0\n", bridge == "pixelle", pxWebsite)
	b.WriteString("  geturl:\n    port: 0\n    control_port: 0\n    opencode:\n      enabled: false\n" +
		"    projects:\n      - name: p\n        root: ~/proj\n        write: true\n        bridges: true\n" +
		// the same root without the bridges opt-in: read-only, and write
		"      - name: ro\n        root: ~/proj\n      - name: w\n        root: ~/proj\n        write: true\n        terminal: true\n")
	path := filepath.Join(t.TempDir(), "hub.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := adapters.NewRegistry(stitchslop.Factory(), aiui.Factory(), pixelle.Factory(), geturl.Factory())
	cfg, err := supervisor.LoadConfig(path, reg)
	if err != nil {
		t.Fatal(err)
	}
	sup, err := supervisor.New(supervisor.Options{Config: cfg, Dirs: dirs, Log: adaptertest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- sup.Serve(ctx, func([]adapters.Status) { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("the hub did not start: %v", err)
	}
	// No keep-alive: the package's leak check must see no idle connection.
	h := &e2eHub{t: t, dirs: dirs, sup: sup, http: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("hub: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the hub did not stop")
		}
	})
	return h
}

func (h *e2eHub) port(name string) int {
	h.t.Helper()
	for _, a := range h.sup.Status() {
		if a.Name == name && len(a.Ports) > 0 {
			return a.Ports[0]
		}
	}
	h.t.Fatalf("%s has no port", name)
	return 0
}

// session mints a geturl session on the configured project p (write,
// bridges) as the operator CLI would (the keyed control API) and returns
// its read and mutation bases from Init.
func (h *e2eHub) session() (r, m string) {
	h.t.Helper()
	r, m = h.sessionOn("p")
	if m == "" {
		h.t.Fatal("project p has no mutation base")
	}
	return r, m
}

// sessionOn is session on the named project; m is "" when it is
// read-only.
func (h *e2eHub) sessionOn(project string) (r, m string) {
	h.t.Helper()
	var cf struct {
		ControlPort int    `json:"controlPort"`
		Key         string `json:"key"`
	}
	b, err := os.ReadFile(filepath.Join(geturl.StateDir(h.dirs), "control.json"))
	if err == nil {
		err = json.Unmarshal(b, &cf)
	}
	if err != nil {
		h.t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/api/sessions", cf.ControlPort), strings.NewReader(`{"project":"`+project+`"}`))
	req.Header.Set(control.KeyHeader, cf.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans struct{ Session struct{ InitURL string } }
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || ans.Session.InitURL == "" {
		h.t.Fatalf("session: %v %+v", err, ans)
	}
	init := h.get(ans.Session.InitURL)
	var bases struct{ Bases struct{ R, M string } }
	json.Unmarshal([]byte(init.raw), &bases)
	if bases.Bases.R == "" {
		h.t.Fatal(init.raw)
	}
	return bases.Bases.R, bases.Bases.M
}

// answer is a data-plane answer, the fields the tests look at.
type answer struct {
	OK          bool   `json:"ok"`
	ErrorCode   string `json:"errorCode"`
	ErrorDetail string `json:"errorDetail"`
	RepairHint  string `json:"repairHint"`
	Retryable   bool   `json:"retryable"`
	Repair      string `json:"repair"`
	// RepairSuffix: what to append to bases.m, for a mutation sent to
	// the read base (which never names the mutation base).
	RepairSuffix string          `json:"repairSuffix"`
	State        string          `json:"state"`
	Replayed     bool            `json:"replayed"`
	Result       json.RawMessage `json:"result"`
	Plugins      []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Tools  int    `json:"tools"`
	} `json:"plugins"`
	Tools []struct {
		Name     string `json:"name"`
		Mutation bool   `json:"mutation"`
	} `json:"tools"`
	raw string
}

// get fetches u byte for byte as written (the raw= tail is not
// re-escaped), as a URL reader does.
func (h *e2eHub) get(u string) answer {
	h.t.Helper()
	host, path, _ := strings.Cut(strings.TrimPrefix(u, "http://"), "/")
	req, err := http.NewRequest("GET", "http://"+host+"/", nil)
	if err != nil {
		h.t.Fatal(err)
	}
	req.URL.Opaque = "/" + path
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		h.t.Fatalf("GET %s: %d %s", u, resp.StatusCode, body)
	}
	a.raw = string(body)
	return a
}

// plugin is the plugin's line in /k ("" status when it is not listed).
func (h *e2eHub) plugin(r, id string) (status string, tools int) {
	for _, p := range h.get(r + "/k").Plugins {
		if p.ID == id {
			return p.Status, p.Tools
		}
	}
	return "", 0
}

// scriptedPage counts the commands a page received, by name.
type scriptedPage struct {
	mu   sync.Mutex
	seen map[string]int
	last map[string]json.RawMessage // the last arguments/command of each name
	// close makes the page (every page of the scenario) go away.
	close func()
	c     *adaptertest.WSClient
}

func newScriptedPage(c *adaptertest.WSClient) *scriptedPage {
	return &scriptedPage{seen: map[string]int{}, last: map[string]json.RawMessage{}, close: c.Close}
}

func (p *scriptedPage) saw(name string, v json.RawMessage) {
	p.mu.Lock()
	p.seen[name]++
	p.last[name] = v
	p.mu.Unlock()
}

func (p *scriptedPage) lastOf(name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.last[name])
}

func (p *scriptedPage) count(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[name]
}

// call is one plugin call: tool and raw JSON arguments.
type call struct{ tool, args string }

// query is the call's request from /k on; control parameters (wait=)
// go before raw=, which takes the rest.
func (c call) query(plugin, control string) string {
	return "/k?plugin=" + plugin + "&tool=" + c.tool + control + "&raw=" + c.args
}

// scenario is one bridge's script: how its page attaches, one read and
// one mutation, and what else only it does.
type scenario struct {
	bridge   string
	attach   func(t testing.TB, h *e2eHub, r, m string) *scriptedPage
	read     call
	readWant string // in the read's result
	mutation call
	extra    func(t testing.TB, h *e2eHub, p *scriptedPage, r, m string)
}

// Every bridge as a plugin, through GETs only: listed offline before its
// page attaches (calls answer BROWSER_OFFLINE, and nothing is journaled,
// so the same URL works later); once attached, discovery lists the page's
// tools with their classification, a read runs on the read base, a
// mutation on the mutation base runs once however often its URL is
// fetched, each is repaired from the wrong base to the right one, and
// when the page leaves the calls answer BROWSER_OFFLINE again.
func TestBridgesAsGeturlPlugins(t *testing.T) {
	for _, sc := range []scenario{stitchslopScenario(), pixelleScenario(), aiuiScenario()} {
		t.Run(sc.bridge, func(t *testing.T) {
			h := startE2EHub(t, sc.bridge)
			r, m := h.session()

			// Discovery: only the enabled bridge is a plugin; no page yet.
			if st, _ := h.plugin(r, sc.bridge); st != "offline" {
				t.Fatalf("before the page: %q", h.get(r+"/k").raw)
			}
			for _, other := range []string{"stitchslop", "pixelle", "aiui"} {
				if st, _ := h.plugin(r, other); other != sc.bridge && st != "" {
					t.Errorf("disabled %s is listed: %s", other, st)
				}
			}
			if a := h.get(r + "/k?plugin=" + sc.bridge); !a.OK || len(a.Tools) != 0 {
				t.Fatalf("offline schemas: %s", a.raw)
			}
			offlineRead := h.get(r + sc.read.query(sc.bridge, ""))
			offlineMut := h.get(m + sc.mutation.query(sc.bridge, mutateWait))
			for _, a := range []answer{offlineRead, offlineMut} {
				if a.ErrorCode != adapters.CodeBrowserOffline || !a.Retryable || a.State != "" {
					t.Fatalf("offline: %s", a.raw)
				}
			}

			p := sc.attach(t, h, r, m)
			adaptertest.WaitFor(t, "the plugin ready", func() bool { st, n := h.plugin(r, sc.bridge); return st == "ready" && n > 0 })
			kinds := map[string]bool{}
			for _, tl := range h.get(r + "/k?plugin=" + sc.bridge).Tools {
				kinds[tl.Name] = tl.Mutation
			}
			if mut, ok := kinds[sc.read.tool]; !ok || mut {
				t.Errorf("%s listed as %v (listed %v)", sc.read.tool, mut, ok)
			}
			if mut, ok := kinds[sc.mutation.tool]; !ok || !mut {
				t.Errorf("%s listed as %v (listed %v)", sc.mutation.tool, mut, ok)
			}

			// A read: on the read base; from the mutation base, repaired.
			rq := sc.read.query(sc.bridge, "")
			if a := h.get(r + rq); !a.OK || !strings.Contains(string(a.Result), sc.readWant) {
				t.Fatalf("read: %s", a.raw)
			}
			if a := h.get(m + rq); a.ErrorCode != "wrong_capability_base" || a.Repair != r+rq {
				t.Fatalf("read on the mutation base: %s", a.raw)
			}
			if n := p.count(sc.read.tool); n != 1 {
				t.Fatalf("the page saw %s %d times", sc.read.tool, n)
			}

			// A mutation: from the read base, directed to bases.m (never
			// named there); run once, replayed after. The offline attempt
			// above journaled nothing, so this same URL runs now.
			mq := sc.mutation.query(sc.bridge, mutateWait)
			a := h.get(r + mq)
			if a.ErrorCode != "wrong_capability_base" || a.Repair != "" || a.RepairSuffix != mq || strings.Contains(a.raw, m) {
				t.Fatalf("mutation on the read base: %s", a.raw)
			}
			first := h.get(m + a.RepairSuffix)
			if !first.OK || first.State != "succeeded" || first.Replayed {
				t.Fatalf("mutation: %s", first.raw)
			}
			again := h.get(m + mq)
			if !again.OK || !again.Replayed || string(again.Result) != string(first.Result) {
				t.Fatalf("mutation again: %s", again.raw)
			}
			if n := p.count(sc.mutation.tool); n != 1 {
				t.Fatalf("the page saw %s %d times", sc.mutation.tool, n)
			}

			if sc.extra != nil {
				sc.extra(t, h, p, r, m)
			}

			p.close()
			adaptertest.WaitFor(t, "the plugin offline", func() bool { st, _ := h.plugin(r, sc.bridge); return st == "offline" })
			if a := h.get(r + rq); a.ErrorCode != adapters.CodeBrowserOffline {
				t.Fatalf("after the page left: %s", a.raw)
			}
		})
	}
}

// stitchslopScenario: a tab paired through a token armed as `hub
// stitchslop pair` arms it, whose tools say scene.describe reads (by name)
// and stitch.add mutates.
func stitchslopScenario() scenario {
	return scenario{
		bridge: "stitchslop",
		attach: func(t testing.TB, h *e2eHub, _, _ string) *scriptedPage {
			port := h.port("stitchslop")
			rem, err := stitchslop.OpenRemote(context.Background(), filepath.Join(h.dirs.Home, ".stitchslop"), port)
			if err != nil {
				t.Fatal(err)
			}
			defer rem.Close()
			tok := "tok_" + hub.RandomHex(8)
			if err := rem.Pair(context.Background(), tok); err != nil {
				t.Fatal(err)
			}
			c, err := adaptertest.Dial(fmt.Sprintf("ws://127.0.0.1:%d/", port), adaptertest.DialOptions{Origin: ssOrigin})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			c.SendText(`{"token":"` + tok + `"}`)
			if m, err := c.Next(frameWait); err != nil || !strings.Contains(m.Text(), `"hello"`) {
				t.Fatalf("handshake: %v %s", err, m.Text())
			}
			c.SendText(`{"tools":[{"name":"scene.describe"},{"name":"stitch.add","inputSchema":{"type":"object"}},{"name":"fail"}]}`)
			p := newScriptedPage(c)
			go func() {
				for {
					msg, err := c.Next(time.Hour)
					if err != nil {
						return
					}
					var f struct {
						ID      json.RawMessage `json:"id"`
						Command string          `json:"command"`
						Args    json.RawMessage `json:"args"`
					}
					if json.Unmarshal(msg.Data, &f) != nil || f.ID == nil {
						continue
					}
					p.saw(f.Command, f.Args)
					reply := fmt.Sprintf(`{"id":%s,"ok":true,"say":"Two objects on the hoop.","objects":2}`, f.ID)
					switch f.Command {
					case "stitch.add":
						reply = fmt.Sprintf(`{"id":%s,"ok":true,"added":%s}`, f.ID, f.Args)
					case "fail":
						reply = fmt.Sprintf(`{"id":%s,"ok":false,"error":"unknown_stitch","message":"That stitch type does not exist."}`, f.ID)
					}
					c.SendText(reply)
				}
			}()
			return p
		},
		read:     call{"scene.describe", `{}`},
		readWant: `"objects":2`,
		mutation: call{"stitch.add", `{"kind":"satin","at":[1,2]}`},
		extra: func(t testing.TB, h *e2eHub, p *scriptedPage, r, m string) {
			if a := h.get(m + "/k?plugin=stitchslop&tool=fail&wait=1500&raw={}"); a.ErrorCode != "unknown_stitch" || a.State != "failed" ||
				!strings.Contains(a.ErrorDetail, "does not exist") {
				t.Fatalf("page error: %s", a.raw)
			}
			if got := p.lastOf("stitch.add"); got != `{"at":[1,2],"kind":"satin"}` {
				t.Fatalf("the tab got %s", got)
			}
		},
	}
}

// pixelleScenario: a canvas whose browser connects and pairs through the
// plugin's pair tool with the code Pixelle shows; the mutation carries its
// expectedRevision and a derived operationId.
func pixelleScenario() scenario {
	return scenario{
		bridge: "pixelle",
		attach: func(t testing.TB, h *e2eHub, r, m string) *scriptedPage {
			port := h.port("pixelle")
			req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/api/sessions", port), nil)
			req.Header.Set("Origin", pxWebsite)
			resp, err := h.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var sess struct{ ID, BrowserToken string }
			json.NewDecoder(resp.Body).Decode(&sess)
			resp.Body.Close()
			c, err := adaptertest.Dial(fmt.Sprintf("ws://127.0.0.1:%d/relay", port), adaptertest.DialOptions{Origin: pxWebsite})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			next := func() map[string]any {
				msg, err := c.Next(frameWait)
				if err != nil {
					t.Fatal(err)
				}
				var v map[string]any
				json.Unmarshal(msg.Data, &v)
				return v
			}
			c.SendText(fmt.Sprintf(`{"type":"hello","role":"browser","sessionId":%q,"token":%q}`, sess.ID, sess.BrowserToken))
			if v := next(); v["type"] != "ready" {
				t.Fatal(v)
			}
			// Connected but unpaired: only pair is offered, and the canvas
			// is not driven.
			adaptertest.WaitFor(t, "pair offered", func() bool { st, n := h.plugin(r, "pixelle"); return st == "ready" && n == 1 })
			if a := h.get(r + "/k?plugin=pixelle&tool=state.read&raw={}"); a.ErrorCode != "NOT_PAIRED" {
				t.Fatalf("unpaired: %s", a.raw)
			}
			c.SendText(`{"type":"pair.create"}`)
			code := next()["code"].(string)
			if a := h.get(m + `/k?plugin=pixelle&tool=pair&wait=1500&raw={"code":"` + code + `"}`); !a.OK || a.State != "succeeded" || !strings.Contains(string(a.Result), `"paired":true`) {
				t.Fatalf("pair: %s", a.raw)
			}
			if v := next(); v["type"] != "paired" {
				t.Fatal(v)
			}
			p := newScriptedPage(c)
			go func() {
				for {
					msg, err := c.Next(time.Hour)
					if err != nil {
						return
					}
					var f struct {
						Type    string          `json:"type"`
						ID      string          `json:"id"`
						Command json.RawMessage `json:"command"`
					}
					if json.Unmarshal(msg.Data, &f) != nil || f.Type != "command" {
						continue
					}
					var cmd struct {
						Method      string `json:"method"`
						OperationID string `json:"operationId"`
					}
					json.Unmarshal(f.Command, &cmd)
					p.saw(cmd.Method, f.Command)
					result := `{"projectId":"example","title":"Example","revision":4,"selection":[],"nodes":[],"edges":[]}`
					if cmd.OperationID != "" {
						result = fmt.Sprintf(`{"revision":5,"affected":["concept"],"operationId":%q}`, cmd.OperationID)
					}
					c.SendText(fmt.Sprintf(`{"type":"result","id":%q,"result":%s}`, f.ID, result))
				}
			}()
			return p
		},
		read:     call{"state.read", `{}`},
		readWant: `"title":"Example"`,
		mutation: call{"nodes.upsert", `{"expectedRevision":4,"params":{"nodes":[{"id":"concept","kind":"note","title":"Concept","content":"Hello"}]}}`},
		extra: func(t testing.TB, h *e2eHub, p *scriptedPage, r, m string) {
			var cmd struct {
				ExpectedRevision int    `json:"expectedRevision"`
				OperationID      string `json:"operationId"`
			}
			json.Unmarshal([]byte(p.lastOf("nodes.upsert")), &cmd)
			if cmd.ExpectedRevision != 4 || !strings.HasPrefix(cmd.OperationID, "op-") {
				t.Fatalf("the browser got %s", p.lastOf("nodes.upsert"))
			}
			if a := h.get(m + "/k?plugin=pixelle&tool=project.import&raw={}"); a.ErrorCode != "NOT_ALLOWED" || a.State != "" {
				t.Fatalf("project.import: %s", a.raw)
			}
		},
	}
}

// aiuiScenario: two dev pages on /tools, morpho and aztec, both holding
// get-state; the bare name is ambiguous, ns/name is not.
func aiuiScenario() scenario {
	return scenario{
		bridge: "aiui",
		attach: func(t testing.TB, h *e2eHub, _, _ string) *scriptedPage {
			return attachAiuiPages(t, h,
				`{"v":1,"type":"register","ns":"morpho","url":"http://localhost:5173/","tools":[{"name":"get-state","description":"the sim state"},{"name":"set-params","inputSchema":{"type":"object"}}]}`,
				`{"v":1,"type":"register","ns":"aztec","url":"http://localhost:5174/","tools":[{"name":"get-state"}]}`)
		},
		read:     call{"morpho/get-state", `{}`},
		readWant: `"ns":"morpho"`,
		mutation: call{"set-params", `{"speed":2}`},
		extra: func(t testing.TB, h *e2eHub, _ *scriptedPage, r, _ string) {
			a := h.get(r + "/k?plugin=aiui&tool=get-state&raw={}")
			if a.ErrorCode != "ambiguous_tool" || !strings.Contains(a.RepairHint, "tool=morpho/get-state, tool=aztec/get-state") || !strings.Contains(a.ErrorDetail, "localhost:5174") {
				t.Fatalf("ambiguous: %s", a.raw)
			}
			if a := h.get(r + "/k?plugin=aiui&tool=aztec/get-state&raw={}"); !a.OK || !strings.Contains(string(a.Result), `"ns":"aztec"`) {
				t.Fatalf("aztec: %s", a.raw)
			}
		},
	}
}

// attachAiuiPages dials one scripted /tools page per registration; each
// answers every call with its namespace and arguments. The first page's
// close makes every page leave.
func attachAiuiPages(t testing.TB, h *e2eHub, regs ...string) *scriptedPage {
	var pages []*scriptedPage
	for _, reg := range regs {
		c, err := adaptertest.Dial(fmt.Sprintf("ws://127.0.0.1:%d/tools", h.port("aiui")), adaptertest.DialOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		c.SendText(reg)
		if msg, err := c.Next(frameWait); err != nil || !strings.Contains(msg.Text(), `"registered"`) {
			t.Fatalf("register: %v %s", err, msg.Text())
		}
		p := newScriptedPage(c)
		p.c = c
		go func() {
			for {
				msg, err := c.Next(time.Hour)
				if err != nil {
					return
				}
				var f struct {
					Type, CallID, NS, Name string
					Args                   json.RawMessage
				}
				if json.Unmarshal(msg.Data, &f) != nil || f.Type != "call" {
					continue
				}
				p.saw(f.NS+"/"+f.Name, f.Args)
				p.saw(f.Name, f.Args)
				c.SendText(fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":true,"value":{"ns":%q,"state":"running","args":%s}}`, f.CallID, f.NS, f.Args))
			}
		}()
		pages = append(pages, p)
	}
	pages[0].close = func() { // every page leaves
		for _, p := range pages[1:] {
			p.close()
		}
		pages[0].c.Close()
	}
	return pages[0]
}
