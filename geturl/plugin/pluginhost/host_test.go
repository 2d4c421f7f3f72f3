package pluginhost

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/engine/intents"
	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/gateway"
	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/plugin"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// counter is a test plugin: "bump" always mutates, "peek" always reads,
// "act" decides by its action; every call is counted with its authority.
type counter struct {
	mu    sync.Mutex
	calls []plugin.Authority
	args  []string
	leak  string // a host path to put in answers
}

func (p *counter) ID() string                    { return "counter" }
func (p *counter) Description() string           { return "counts calls" }
func (p *counter) Status(context.Context) string { return "ready" }
func (p *counter) Tools() []plugin.Tool {
	return []plugin.Tool{{Name: "bump", Mutation: true}, {Name: "peek"}, {Name: "act", Mutation: true}, {Name: "fail", Mutation: true}}
}

func (p *counter) Classify(tool string, args json.RawMessage) (bool, error) {
	var a struct{ Action string }
	if err := json.Unmarshal(args, &a); err != nil {
		return false, plugin.Errorf("invalid_arguments", false, "%v", err)
	}
	switch tool {
	case "bump", "fail":
		return true, nil
	case "peek":
		return false, nil
	case "act":
		switch a.Action {
		case "get":
			return false, nil
		case "set":
			return true, nil
		}
		return false, plugin.Errorf("unknown_action", false, "action %q", a.Action)
	}
	return false, plugin.Errorf("unknown_tool", false, "%s", tool)
}

func (p *counter) Call(_ context.Context, auth plugin.Authority, tool string, args json.RawMessage) (json.RawMessage, error) {
	p.mu.Lock()
	p.calls = append(p.calls, auth)
	p.args = append(p.args, string(args))
	n := len(p.calls)
	p.mu.Unlock()
	if tool == "fail" {
		return nil, &plugin.Error{Code: "backend_down", Detail: "cannot reach " + p.leak + "/socket", Retryable: true}
	}
	return json.RawMessage(`{"n":` + strconv.Itoa(n) + `,"where":"` + p.leak + `/sub"}`), nil
}

func (p *counter) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls)
}

type testSession struct {
	scope  *sandbox.Scope
	perm   route.Permissions
	store  *replay.Store
	tokens map[route.Capability]string
	state  *mutation.State
}

func (s *testSession) Scope() *sandbox.Scope           { return s.scope }
func (s *testSession) Permissions() route.Permissions  { return s.perm }
func (s *testSession) Replay() *replay.Store           { return s.store }
func (s *testSession) Coverage() route.Coverage        { return s.state.Ledger }
func (s *testSession) Project() string                 { return "demo" }
func (s *testSession) Token(c route.Capability) string { return s.tokens[c] }
func (s *testSession) Mutations() *mutation.State      { return s.state }

type env struct {
	t      *testing.T
	root   string
	p      *counter
	srv    *httptest.Server
	host   *Host
	table  *route.TokenTable
	origin string
}

func newEnv(t *testing.T, extra ...plugin.Plugin) *env {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	e := &env{t: t, root: root, p: &counter{leak: root}, table: &route.TokenTable{}}
	mh := mutation.NewHost(mutation.Options{})
	h, err := New(mh, append([]plugin.Plugin{e.p}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	e.host = h
	k := kernel.New(kernel.Options{Plugins: h, Mutations: mh, NoRG: true, NoVersions: true})
	e.srv = httptest.NewUnstartedServer(nil)
	port := e.srv.Listener.Addr().(*net.TCPAddr).Port
	e.srv.Config.Handler = gateway.New(gateway.Options{Sessions: e.table, Kernel: k, Port: port})
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	e.origin = "http://127.0.0.1:" + strconv.Itoa(port)
	return e
}

// session adds a session and returns its read and mutation bases.
func (e *env) session(perm route.Permissions, seed string) (r, m string) {
	sc, err := sandbox.New(e.root)
	if err != nil {
		e.t.Fatal(err)
	}
	s := &testSession{scope: sc, perm: perm, store: replay.New(nil), state: mutation.NewState(&files.Ledger{}, nil),
		tokens: map[route.Capability]string{route.CapInit: seed + "Init001", route.CapRead: seed + "Read001"}}
	if perm.Mutations() {
		s.tokens[route.CapMutation] = seed + "Mut0001"
		m = e.origin + "/v0/" + seed + "Mut0001"
	}
	e.table.Add(s)
	return e.origin + "/v0/" + seed + "Read001", m
}

type answer struct {
	OK        bool   `json:"ok"`
	ErrorCode string `json:"errorCode"`
	Repair    string `json:"repair"`
	// RepairBase and RepairSuffix direct a mutation on the read base to
	// bases.m without naming it.
	RepairBase   string          `json:"repairBase"`
	RepairSuffix string          `json:"repairSuffix"`
	Retry        string          `json:"retry"`
	Call         string          `json:"call"`
	State        string          `json:"state"`
	Replayed     bool            `json:"replayed"`
	Result       json.RawMessage `json:"result"`
	raw          string
}

func (e *env) get(u string) answer {
	e.t.Helper()
	pu, _ := url.Parse(u)
	req, _ := http.NewRequest("GET", e.srv.URL, nil)
	req.URL = &url.URL{Scheme: "http", Host: pu.Host, Opaque: strings.TrimPrefix(u, e.origin)}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || strings.Contains(string(b), e.root) {
		e.t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	var a answer
	if err := json.Unmarshal(b, &a); err != nil {
		e.t.Fatalf("%s: %v", b, err)
	}
	a.raw = string(b)
	return a
}

func TestDiscovery(t *testing.T) {
	e := newEnv(t)
	r, _ := e.session(route.Permissions{Write: true}, "A")
	if a := e.get(r + "/k"); !strings.Contains(a.raw, `{"id":"counter","description":"counts calls","status":"ready","tools":4}`) {
		t.Fatal(a.raw)
	}
	if a := e.get(r + "/k?plugin=counter"); !strings.Contains(a.raw, `{"name":"bump","mutation":true}`) {
		t.Fatal(a.raw)
	}
}

// Reads run on the read base; a read on the mutation base is repaired to
// the exact same call on the read base, and a mutation on the read base
// is directed to the same call on bases.m.
func TestCapabilityRepairBothWays(t *testing.T) {
	e := newEnv(t)
	r, m := e.session(route.Permissions{Write: true}, "A")
	if a := e.get(r + `/k?plugin=counter&tool=peek&raw={}`); !a.OK || string(a.Result) != `{"n":1,"where":"/project/sub"}` {
		t.Fatal(a.raw)
	}
	a := e.get(m + `/k?plugin=counter&tool=act&raw={"action":"get"}`)
	if a.ErrorCode != transport.CodeWrongCapabilityBase || a.Repair != r+`/k?plugin=counter&tool=act&raw={"action":"get"}` {
		t.Fatal(a.raw)
	}
	if e.p.count() != 1 {
		t.Fatal("a refused call ran")
	}
	e.get(a.Repair)
	q := `/k?plugin=counter&tool=act&wait=1500&raw={"action":"set","v":1}`
	a = e.get(r + q)
	// The read base never names the mutation base: the answer gives the
	// call to append to bases.m instead of a URL.
	if a.ErrorCode != transport.CodeWrongCapabilityBase || a.Repair != "" || a.RepairBase != "m" || a.RepairSuffix != q ||
		strings.Contains(a.raw, m) {
		t.Fatal(a.raw)
	}
	if e.p.count() != 2 {
		t.Fatal("a refused mutation ran")
	}
	if b := e.get(m + a.RepairSuffix); !b.OK || b.State != "succeeded" || b.Replayed || !strings.HasPrefix(b.Call, "auto:plugin:") {
		t.Fatal(b.raw)
	}
	if b := e.get(m + a.RepairSuffix); !b.Replayed || e.p.count() != 3 {
		t.Fatalf("replay: %s, %d calls", b.raw, e.p.count())
	}
}

// A plugin mutation is journaled before the plugin sees it: the same URL
// (or the same arguments in another key order, or staged) calls the plugin
// once; run= calls it again.
func TestPluginMutationDedupe(t *testing.T) {
	e := newEnv(t)
	_, m := e.session(route.Permissions{Write: true, Terminal: true}, "A")
	first := e.get(m + `/k?plugin=counter&tool=bump&wait=1500&raw={"b":[1,{"y":2,"x":1}],"a":"x"}`)
	for _, u := range []string{
		m + `/k?plugin=counter&tool=bump&wait=1500&raw={"b":[1,{"y":2,"x":1}],"a":"x"}`,
		m + `/k?plugin=counter&tool=bump&raw=+{+"a"+:+"\u0078",+"b":[1,{"x":1,"y":2}]+}+`,
	} {
		if a := e.get(u); !a.Replayed || a.Call != first.Call {
			t.Fatalf("%s: %s", u, a.raw)
		}
	}
	e.get(m + `/s?blob=args&i=0&count=2&raw={"a":"x",`)
	e.get(m + `/s?blob=args&i=1&count=2&raw="b":[1,{"y":2,"x":1}]}`)
	if a := e.get(m + `/k?plugin=counter&tool=bump&blob=args&count=2&wait=1500`); !a.Replayed || a.Call != first.Call {
		t.Fatal(a.raw)
	}
	if e.p.count() != 1 || e.p.args[0] != `{"a":"x","b":[1,{"x":1,"y":2}]}` {
		t.Fatalf("%d calls, args %q", e.p.count(), e.p.args)
	}
	// Concurrent replays of a new call: still one.
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() { defer wg.Done(); e.get(m + `/k?plugin=counter&tool=bump&wait=1500&raw={"c":1}`) }()
	}
	wg.Wait()
	if e.p.count() != 2 {
		t.Fatalf("%d calls", e.p.count())
	}
	if a := e.get(m + `/k?plugin=counter&tool=bump&run=2&wait=1500&raw={"c":1}`); a.Replayed || e.p.count() != 3 {
		t.Fatal(a.raw)
	}
	// The identity is the plugin's own: the same arguments to another tool differ.
	d1, _ := intents.Identity("plugin", map[string]any{"plugin": "counter", "tool": "bump", "args": json.RawMessage(`{"c":1}`)}, "")
	d2, _ := intents.Identity("plugin", map[string]any{"plugin": "counter", "tool": "fail", "args": json.RawMessage(`{"c":1}`)}, "")
	if d1 == d2 {
		t.Fatal("tool not in the identity")
	}
}

// Every call carries the calling session's own authority; a read-only
// session's mutation is refused with no URL and never reaches the plugin.
func TestAuthorityAndReadOnly(t *testing.T) {
	e := newEnv(t)
	_, m := e.session(route.Permissions{Write: true}, "A")
	r2, _ := e.session(route.Permissions{}, "B")
	e.get(m + `/k?plugin=counter&tool=bump&wait=1500&raw={}`)
	e.get(r2 + `/k?plugin=counter&tool=peek&raw={}`)
	if e.p.calls[0] != (plugin.Authority{Root: e.root, Write: true}) || e.p.calls[1] != (plugin.Authority{Root: e.root}) {
		t.Fatalf("%+v", e.p.calls)
	}
	a := e.get(r2 + `/k?plugin=counter&tool=bump&wait=1500&raw={}`)
	if a.ErrorCode != route.CodeMutationsDisabled || a.Repair != "" || a.Retry != "" || e.p.count() != 2 {
		t.Fatal(a.raw)
	}
}

func TestBadArgumentsAndErrors(t *testing.T) {
	e := newEnv(t)
	r, m := e.session(route.Permissions{Write: true}, "A")
	for _, raw := range []string{`{"a":1,"a":2}`, `[1]`, `{"a":`, `"x"`, `{}{}`} {
		if a := e.get(r + `/k?plugin=counter&tool=peek&raw=` + transport.Encode(raw)); a.ErrorCode != CodeInvalidArguments {
			t.Errorf("%s: %s", raw, a.raw)
		}
	}
	if a := e.get(r + `/k?plugin=counter&tool=act&raw={"action":"dance"}`); a.ErrorCode != "unknown_action" {
		t.Fatal(a.raw)
	}
	if a := e.get(r + `/k?plugin=counter&tool=peek&blob=nope`); a.ErrorCode != "staged_blob_not_found" {
		t.Fatal(a.raw)
	}
	// A plugin failure is the intent's record, host paths redacted, with a
	// retry URL when the plugin says retrying can help.
	a := e.get(m + `/k?plugin=counter&tool=fail&wait=1500&raw={}`)
	if a.ErrorCode != "backend_down" || a.State != "failed" || !strings.Contains(a.raw, "/project/socket") || !strings.Contains(a.Retry, "&run=retry.") {
		t.Fatal(a.raw)
	}
	if e.p.count() != 1 {
		t.Fatal(e.p.count())
	}
}

// pager is a plugin that comes and goes (Conditional) and whose tools are
// a page's (Open): it lists "look" only while its page is up, and its
// Classify answers for every tool name.
type pager struct {
	mu          sync.Mutex
	present     bool
	page        bool
	classifyMut bool // look is a mutation
	calls       int
}

func (p *pager) ID() string          { return "pager" }
func (p *pager) Description() string { return "a page" }
func (p *pager) Status(context.Context) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.page {
		return "ready"
	}
	return "offline"
}
func (p *pager) Present() bool       { p.mu.Lock(); defer p.mu.Unlock(); return p.present }
func (p *pager) TakesUnlisted() bool { return true }
func (p *pager) Tools() []plugin.Tool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.page {
		return nil
	}
	return []plugin.Tool{{Name: "look"}}
}
func (p *pager) Classify(tool string, _ json.RawMessage) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.page:
		return false, &plugin.Error{Code: "BROWSER_OFFLINE", Detail: "no page", Retryable: true}
	case tool != "look":
		return false, plugin.Errorf("unknown_tool", false, "the page has no %s", tool)
	}
	return p.classifyMut, nil
}
func (p *pager) Call(context.Context, plugin.Authority, string, json.RawMessage) (json.RawMessage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	return json.RawMessage(`{"seen":true}`), nil
}

// A Conditional plugin is listed and callable only while Present; an Open
// one answers calls of tools it does not list with its own error.
func TestConditionalAndOpenPlugins(t *testing.T) {
	pg := &pager{}
	e := newEnv(t, pg)
	r, _ := e.session(route.Permissions{Write: true}, "A")
	for _, tc := range []struct {
		present, page bool
		list          string // what /k shows of pager ("" = absent)
		call          string // errorCode of a call of "look" ("" = ok)
		other         string // errorCode of a call of "nope"
	}{
		{false, true, "", route.CodeUnknownPlugin, route.CodeUnknownPlugin},
		{true, false, `{"id":"pager","description":"a page","status":"offline","tools":0}`, "BROWSER_OFFLINE", "BROWSER_OFFLINE"},
		{true, true, `{"id":"pager","description":"a page","status":"ready","tools":1}`, "", "unknown_tool"},
	} {
		pg.mu.Lock()
		pg.present, pg.page = tc.present, tc.page
		pg.mu.Unlock()
		if a := e.get(r + "/k"); tc.list == "" && strings.Contains(a.raw, `"pager"`) || tc.list != "" && !strings.Contains(a.raw, tc.list) {
			t.Errorf("%+v: /k: %s", tc, a.raw)
		}
		if a := e.get(r + "/k?plugin=pager"); (tc.list == "") != (a.ErrorCode == route.CodeUnknownPlugin) {
			t.Errorf("%+v: schemas: %s", tc, a.raw)
		}
		if a := e.get(r + `/k?plugin=pager&tool=look&raw={}`); a.ErrorCode != tc.call || tc.call == "" && !strings.Contains(a.raw, `"seen":true`) {
			t.Errorf("%+v: look: %s", tc, a.raw)
		}
		if a := e.get(r + `/k?plugin=pager&tool=nope&raw={}`); a.ErrorCode != tc.other {
			t.Errorf("%+v: nope: %s", tc, a.raw)
		}
	}
	// The counter, which is not Open, still has the kernel refuse its
	// unlisted tools before it sees them.
	if a := e.get(r + `/k?plugin=counter&tool=nope&raw={}`); a.ErrorCode != route.CodeUnknownTool || e.p.count() != 0 {
		t.Fatal(a.raw)
	}
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if pg.calls != 1 {
		t.Fatalf("%d calls reached the page", pg.calls)
	}
}

// A journaled plugin mutation fetched again answers from its record even
// while its plugin is gone or its page lists nothing (a bridge that is
// down): the agent learns the outcome, not that its URL is wrong; a call
// never journaled still gets the plugin's own refusal.
func TestJournaledCallReplaysWhilePluginIsAway(t *testing.T) {
	pg := &pager{present: true, page: true}
	pg.classifyMut = true
	e := newEnv(t, pg)
	_, m := e.session(route.Permissions{Write: true}, "A")
	u := m + `/k?plugin=pager&tool=look&wait=1000&raw={"n":1}`
	if a := e.get(u); a.State != "succeeded" || a.Replayed {
		t.Fatal(a.raw)
	}
	for _, away := range []struct{ present, page bool }{{true, false}, {false, false}} {
		pg.mu.Lock()
		pg.present, pg.page = away.present, away.page
		pg.mu.Unlock()
		if a := e.get(u); a.State != "succeeded" || !a.Replayed || !strings.Contains(string(a.Result), `"seen":true`) {
			t.Fatalf("%+v: %s", away, a.raw)
		}
		if a := e.get(m + `/k?plugin=pager&tool=look&wait=1000&raw={"n":2}`); a.ErrorCode == "" {
			t.Fatalf("%+v: a new call ran: %s", away, a.raw)
		}
	}
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if pg.calls != 1 {
		t.Fatalf("%d calls reached the page", pg.calls)
	}
}

// A read is not journaled: wait=, run= and call= on it would be ignored,
// so they are refused with the same call without them as the repair, on
// either base (a read on the mutation base needs one repair, not two).
func TestReadCallRefusesIntentControls(t *testing.T) {
	e := newEnv(t)
	r, m := e.session(route.Permissions{Write: true}, "A")
	for _, base := range []string{r, m} {
		for _, q := range []string{`run=2&`, `call=mine&`, `wait=1000&`, `wait=1000&run=x.1&`} {
			a := e.get(base + `/k?plugin=counter&tool=peek&` + q + `raw={}`)
			if a.OK || a.Repair != r+`/k?plugin=counter&tool=peek&raw={}` {
				t.Fatalf("%s on %s: %s", q, base, a.raw)
			}
		}
	}
	if e.p.count() != 0 {
		t.Fatal("a refused read ran")
	}
	if a := e.get(r + `/k?plugin=counter&tool=peek&raw={}`); !a.OK || e.p.count() != 1 {
		t.Fatal(a.raw)
	}
}

// gated is a pager only sessions with write and the bridges opt-in may
// reach (plugin.Gated, as a hub bridge); it counts the statuses asked of
// it and the authorities its calls carried.
type gated struct {
	*pager
	statuses int
	auths    []plugin.Authority
}

func (g *gated) ID() string { return "gated" }
func (g *gated) Status(ctx context.Context) string {
	g.mu.Lock()
	g.statuses++
	g.mu.Unlock()
	return g.pager.Status(ctx)
}
func (g *gated) Admit(auth plugin.Authority) error {
	if auth.Write && auth.Bridges {
		return nil
	}
	return &plugin.Error{Code: "bridges_disabled", Detail: "not for " + g.pager.ID() + " at " + auth.Root, Hint: "set --bridges"}
}
func (g *gated) Call(ctx context.Context, auth plugin.Authority, tool string, args json.RawMessage) (json.RawMessage, error) {
	g.mu.Lock()
	g.auths = append(g.auths, auth)
	g.mu.Unlock()
	return g.pager.Call(ctx, auth, tool, args)
}

// A Gated plugin is invisible to a session it does not admit — not in
// /k, its status not even asked — and every use of it (schemas, a read, a
// mutation, an unlisted tool, on either base) answers its refusal, paths
// redacted, before it classifies or runs anything; an admitted session
// lists and calls it with the opt-in in its authority.
func TestGatedPluginOnlyForAdmittedSessions(t *testing.T) {
	pg := &gated{pager: &pager{present: true, page: true}}
	e := newEnv(t, pg)
	ro, _ := e.session(route.Permissions{}, "A")
	wr, wm := e.session(route.Permissions{Write: true, Terminal: true}, "B")
	br, bm := e.session(route.Permissions{Write: true, Bridges: true}, "C")
	for _, base := range []string{ro, wr, wm} {
		if a := e.get(base + "/k"); !a.OK || strings.Contains(a.raw, `"gated"`) || !strings.Contains(a.raw, `"counter"`) {
			t.Fatalf("%s: %s", base, a.raw)
		}
		for _, q := range []string{"/k?plugin=gated", `/k?plugin=gated&tool=look&raw={}`, `/k?plugin=gated&tool=nope&raw={}`,
			`/k?plugin=gated&tool=look&wait=1000&raw={"n":1}`} {
			a := e.get(base + q)
			if a.ErrorCode != "bridges_disabled" || a.Repair != "" || !strings.Contains(a.raw, "not for pager at /project") {
				t.Fatalf("%s%s: %s", base, q, a.raw)
			}
		}
	}
	pg.mu.Lock()
	statuses, calls := pg.statuses, pg.calls
	pg.mu.Unlock()
	if statuses != 0 || calls != 0 {
		t.Fatalf("refused sessions cost %d statuses and %d calls", statuses, calls)
	}
	if a := e.get(br + "/k"); !strings.Contains(a.raw, `{"id":"gated","description":"a page","status":"ready","tools":1}`) {
		t.Fatal(a.raw)
	}
	if a := e.get(br + `/k?plugin=gated&tool=look&raw={}`); !a.OK || !strings.Contains(string(a.Result), `"seen":true`) {
		t.Fatal(a.raw)
	}
	pg.classifyMut = true
	if a := e.get(bm + `/k?plugin=gated&tool=look&wait=1000&raw={"n":1}`); a.State != "succeeded" {
		t.Fatal(a.raw)
	}
	if len(pg.auths) != 2 || pg.auths[0] != (plugin.Authority{Root: e.root, Write: true, Bridges: true}) {
		t.Fatalf("%+v", pg.auths)
	}
	// The operator's view (the control page) lists every plugin.
	if list := fmt.Sprint(e.host.List()); !strings.Contains(list, "gated") {
		t.Fatal(list)
	}
}
