package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// page is a fake /tools connection that records what the server sent.
type page struct {
	mu   sync.Mutex
	sent []map[string]any
	c    *Client
	d    *Directory
}

func (p *page) send(v any) error {
	b, _ := json.Marshal(v)
	var m map[string]any
	json.Unmarshal(b, &m)
	p.mu.Lock()
	p.sent = append(p.sent, m)
	p.mu.Unlock()
	return nil
}

func (p *page) last() map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.sent) == 0 {
		return nil
	}
	return p.sent[len(p.sent)-1]
}

func connect(d *Directory) *page {
	p := &page{d: d}
	p.c = d.Connect(p.send)
	return p
}

func (p *page) msg(s string) { p.d.Handle(p.c, []byte(s)) }

func (p *page) register(ns, hash string, tab string, tools ...string) {
	var ts []string
	for _, t := range tools {
		ts = append(ts, fmt.Sprintf(`{"name":%q,"description":"d"}`, t))
	}
	if tab == "" {
		tab = "null"
	}
	p.msg(fmt.Sprintf(`{"v":1,"type":"register","ns":%q,"hash":%q,"url":"http://localhost:5173/","tab":%s,"tools":[%s]}`, ns, hash, tab, strings.Join(ts, ",")))
}

// answerLoop answers the next call sent after now with value.
func (p *page) answerLoop(t *testing.T, value string) {
	p.mu.Lock()
	from := len(p.sent)
	p.mu.Unlock()
	go func() {
		for range 2000 {
			p.mu.Lock()
			var call map[string]any
			for _, m := range p.sent[from:] {
				if m["type"] == "call" {
					call = m
					break
				}
			}
			p.mu.Unlock()
			if call != nil {
				p.msg(fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":true,"value":%s}`, call["callId"], value))
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestRegisterReplacesNamespace(t *testing.T) {
	d := NewDirectory(quiet())
	p := connect(d)
	p.register("morpho", "h1", "", "a", "b")
	if m := p.last(); m["type"] != "registered" || m["ns"] != "morpho" || m["hash"] != "h1" {
		t.Fatalf("ack = %v", m)
	}
	p.register("morpho", "h2", "", "c")
	p.register("aztec", "h3", "", "d")
	l := d.List()
	if len(l) != 2 || l[0].NS != "morpho" || l[0].Hash != "h2" || len(l[0].Tools) != 1 || l[1].NS != "aztec" {
		t.Fatalf("list = %+v", l)
	}
	if s := d.Summary(); s != (Summary{Clients: 1, Namespaces: 2, Tools: 2}) {
		t.Fatalf("summary = %+v", s)
	}
	d.Disconnect(p.c)
	if len(d.List()) != 0 {
		t.Fatal("registrations survived the socket close")
	}
}

func TestBadMessages(t *testing.T) {
	d := NewDirectory(quiet())
	p := connect(d)
	for _, tt := range []struct{ msg, want string }{
		{`nope`, "not a JSON object"},
		{`{"type":"zap"}`, "unknown message type"},
		{`{"type":"register","ns":""}`, "needs an ns"},
		{`{"type":"register","ns":"a","tools":[{"name":"x"},{"name":"x"}]}`, "declared twice"},
		{`{"type":"register","ns":"a","tools":[{"name":"x","inputSchema":[1]}]}`, "must be a JSON object"},
		{`{"type":"result","callId":"nope","ok":true}`, "no call"},
		{`{"type":"activation","tab":{}}`, "activation needs"},
	} {
		p.msg(tt.msg)
		if m := p.last(); m["type"] != "error" || !strings.Contains(m["error"].(string), tt.want) {
			t.Errorf("%s → %v, want error with %q", tt.msg, m, tt.want)
		}
	}
}

func TestCallRouting(t *testing.T) {
	tab := func(tabID, win int) string {
		return fmt.Sprintf(`{"title":"t%d","chromeTabId":%d,"windowId":%d}`, tabID, tabID, win)
	}
	d := NewDirectory(quiet())
	ctx := context.Background()
	var re *RouteError
	if _, err := d.Call(ctx, CallRequest{Name: "x"}); !errors.As(err, &re) || !strings.Contains(err.Error(), "no page is connected") {
		t.Fatalf("no page: %v", err)
	}
	a, b := connect(d), connect(d)
	a.register("morpho", "h", tab(10, 1), "set", "only-a")
	b.register("morpho", "h", tab(11, 1), "set")
	if _, err := d.Call(ctx, CallRequest{Name: "missing"}); !errors.As(err, &re) || !strings.Contains(err.Error(), `no page tool named "missing"`) {
		t.Fatalf("no match: %v", err)
	}
	a.answerLoop(t, `"from-a"`)
	if v, err := d.Call(ctx, CallRequest{Name: "only-a", Args: json.RawMessage(`{"k":1}`)}); err != nil || string(v) != `"from-a"` {
		t.Fatalf("single match: %s %v", v, err)
	}
	_, err := d.Call(ctx, CallRequest{Name: "set"})
	if !errors.As(err, &re) || len(re.Candidates) != 2 || !strings.Contains(err.Error(), "clientId="+a.c.ID) || !strings.Contains(err.Error(), "clientId="+b.c.ID) {
		t.Fatalf("ambiguous: %v", err)
	}
	b.answerLoop(t, `"from-b"`)
	if v, err := d.Call(ctx, CallRequest{Name: "set", ClientID: b.c.ID}); err != nil || string(v) != `"from-b"` {
		t.Fatalf("narrowed by clientId: %s %v", v, err)
	}
	// an activation reporter makes b's tab active: the active-tab rung engages
	ext := connect(d)
	ext.msg(`{"v":1,"type":"activation","tab":{"chromeTabId":11,"windowId":1},"active":true}`)
	b.answerLoop(t, `"active-b"`)
	if v, err := d.Call(ctx, CallRequest{Name: "set"}); err != nil || string(v) != `"active-b"` {
		t.Fatalf("active tab wins: %s %v", v, err)
	}
	// a stale deactivation of another tab does not clobber the slot
	ext.msg(`{"v":1,"type":"activation","tab":{"chromeTabId":10,"windowId":1},"active":false}`)
	if l := d.List(); l[0].ClientID != b.c.ID || !l[0].ActiveTab {
		t.Fatalf("stale deactivation cleared the active tab: %+v", l)
	}
	ext.msg(`{"v":1,"type":"activation","tab":{"chromeTabId":11,"windowId":1},"active":false}`)
	if l := d.List(); l[0].ActiveTab || l[1].ActiveTab {
		t.Fatal("deactivation of the active tab did not clear it")
	}
	// the page's own error comes back as a ToolError
	a.mu.Lock()
	a.sent = nil
	a.mu.Unlock()
	go func() {
		for range 200 {
			if m := a.last(); m != nil && m["type"] == "call" && m["name"] == "only-a" {
				a.msg(fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":false,"error":"bad params"}`, m["callId"]))
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var te *ToolError
	if _, err := d.Call(ctx, CallRequest{Name: "only-a"}); !errors.As(err, &te) || te.Msg != "bad params" {
		t.Fatalf("tool error: %v", err)
	}
}

func TestCallTimeoutAndDisconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := NewDirectory(quiet())
		p := connect(d)
		p.register("ns", "h", "", "slow")
		start := time.Now()
		var te *ToolError
		if _, err := d.Call(context.Background(), CallRequest{Name: "slow"}); !errors.As(err, &te) || !strings.Contains(te.Msg, "did not answer within 15s") {
			t.Fatalf("timeout: %v", err)
		}
		if got := time.Since(start); got != 15*time.Second {
			t.Fatalf("timed out after %s, want the 15 s default", got)
		}
		errc := make(chan error, 1)
		go func() { _, err := d.Call(context.Background(), CallRequest{Name: "slow"}); errc <- err }()
		synctest.Wait()
		d.Disconnect(p.c)
		if err := <-errc; err == nil || !strings.Contains(err.Error(), "page disconnected") {
			t.Fatalf("in-flight call after disconnect: %v", err)
		}
	})
}

// TestCallTimeoutCoversAStuckSend: a page that stopped reading its socket
// blocks the call's write, not only its answer; the call still ends at
// its timeout, and every call queued behind the stuck write too.
func TestCallTimeoutCoversAStuckSend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := NewDirectory(quiet())
		d.CallTimeout = 300 * time.Millisecond
		wlock := make(chan struct{}, 1) // the socket's write lock
		release := make(chan struct{})
		stuck := &page{d: d}
		stuck.c = d.Connect(func(v any) error {
			if m, ok := v.(map[string]any); !ok || m["type"] != "call" {
				return stuck.send(v)
			}
			wlock <- struct{}{}
			defer func() { <-wlock }()
			<-release
			return errors.New("closed")
		})
		stuck.register("ns", "h", "", "big")
		start := time.Now()
		errs := make(chan error, 3)
		for range 3 {
			go func() { _, err := d.Call(context.Background(), CallRequest{Name: "big"}); errs <- err }()
		}
		for range 3 {
			var te *ToolError
			if err := <-errs; !errors.As(err, &te) || te.Code != OutcomeUnknown || !strings.Contains(te.Msg, "did not answer within 300ms") {
				t.Fatalf("call to a stuck page: %v", err)
			}
		}
		if got := time.Since(start); got != 300*time.Millisecond {
			t.Fatalf("calls ended after %s, want the 300 ms call timeout", got)
		}
		close(release)
	})
}

func TestDebouncedChangeSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := NewDirectory(quiet())
		var mu sync.Mutex
		var texts []string
		d.OnChange = func(c Change) { mu.Lock(); texts = append(texts, c.Text); mu.Unlock() }
		got := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), texts...) }
		defer d.Close()
		p := connect(d)
		p.register("morpho", "h1", `{"title":"Morpho","chromeTabId":1,"windowId":1}`, "set")
		p.register("morpho", "h1", `{"title":"Morpho","chromeTabId":1,"windowId":1}`, "set")
		time.Sleep(499 * time.Millisecond)
		synctest.Wait()
		if g := got(); len(g) != 0 {
			t.Fatalf("signal before the 500 ms window: %v", g)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if g := got(); len(g) != 1 || g[0] != "page tools changed: morpho/set" {
			t.Fatalf("after window: %v", g)
		}
		// same-hash re-registration: silent
		p.register("morpho", "h1", `{"title":"Morpho","chromeTabId":1,"windowId":1}`, "set")
		// reload: close + reconnect restoring an identical set within the window nets to nothing
		d.Disconnect(p.c)
		q := connect(d)
		q.register("morpho", "h1", `{"title":"Morpho","chromeTabId":1,"windowId":1}`, "set")
		time.Sleep(time.Second)
		synctest.Wait()
		if g := got(); len(g) != 1 {
			t.Fatalf("identical set signalled again: %v", g)
		}
		// an activation flip re-flags the entry
		q.msg(`{"v":1,"type":"activation","tab":{"chromeTabId":1,"windowId":1},"active":true}`)
		time.Sleep(time.Second)
		synctest.Wait()
		if g := got(); len(g) != 2 || g[1] != "page tools changed: morpho/set (active tab: Morpho)" {
			t.Fatalf("activation: %v", g)
		}
		d.Disconnect(q.c)
		time.Sleep(time.Second)
		synctest.Wait()
		if g := got(); len(g) != 3 || g[2] != "page tools changed: none" {
			t.Fatalf("loss: %v", g)
		}
	})
}

func FuzzHandle(f *testing.F) {
	f.Add([]byte(`{"v":1,"type":"register","ns":"a","hash":"h","tools":[{"name":"x","inputSchema":{"type":"object"}}]}`))
	f.Add([]byte(`{"v":1,"type":"activation","tab":{"chromeTabId":1,"windowId":2},"active":true}`))
	f.Add([]byte(`{"v":1,"type":"result","callId":"c","ok":false}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewDirectory(quiet())
		p := connect(d)
		p.msg(string(b))
		d.List()
		d.Summary()
		d.Disconnect(p.c)
	})
}

type countHandler struct {
	mu    sync.Mutex
	lines []string
}

func (h *countHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.lines = append(h.lines, r.Message)
	h.mu.Unlock()
	return nil
}
func (h *countHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countHandler) WithGroup(string) slog.Handler      { return h }

// TestRegistrationLogIsHashGated: the registration line is logged only
// when a namespace's hash changes, even across reconnects.
func TestRegistrationLogIsHashGated(t *testing.T) {
	ch := &countHandler{}
	d := NewDirectory(slog.New(ch))
	p := connect(d)
	p.register("morpho", "h1", "", "a")
	p.register("morpho", "h1", "", "a")
	d.Disconnect(p.c)
	q := connect(d)
	q.register("morpho", "h1", "", "a")
	if len(ch.lines) != 1 {
		t.Fatalf("logged %d lines for an unchanged hash", len(ch.lines))
	}
	q.register("morpho", "h2", "", "a", "b")
	if len(ch.lines) != 2 {
		t.Fatalf("hash change not logged: %v", ch.lines)
	}
}

// TestDirectoryMemoryIsBounded: a hostile /tools client cannot grow the
// directory's bookkeeping without bound — neither the window → active-tab
// map (one activation per made-up window) nor the hash-gated logging
// memory (a fresh namespace name per reconnect). The newest activation
// still counts.
func TestDirectoryMemoryIsBounded(t *testing.T) {
	d := NewDirectory(slog.New(slog.DiscardHandler))
	p := connect(d)
	for w := range MaxWindows + 50 {
		p.msg(fmt.Sprintf(`{"v":1,"type":"activation","tab":{"chromeTabId":%d,"windowId":%d},"active":true}`, w+1000, w))
	}
	if n := len(d.active); n > MaxWindows {
		t.Fatalf("active map holds %d windows, max %d", n, MaxWindows)
	}
	last := MaxWindows + 49
	p.register("ns", "h", fmt.Sprintf(`{"chromeTabId":%d,"windowId":%d}`, last+1000, last), "t")
	if l := d.List(); len(l) != 1 || !l[0].ActiveTab {
		t.Fatalf("the newest activation was evicted: %+v", l)
	}
	for i := range maxLogged/MaxNamespaces + 2 {
		q := connect(d)
		for j := range MaxNamespaces {
			q.register(fmt.Sprintf("ns-%d-%d", i, j), "h", "", "t")
		}
		d.Disconnect(q.c)
	}
	if n := len(d.logged); n > maxLogged {
		t.Fatalf("registration-log memory holds %d namespaces, max %d", n, maxLogged)
	}
}

// TestRegistrationBytesPerConnectionAreBounded: the namespaces one /tools
// connection declares are bounded together in bytes (not only 64 × one
// message each); a re-registration replaces its namespace's share, and a
// register over the budget is refused with an error, keeping the rest.
func TestRegistrationBytesPerConnectionAreBounded(t *testing.T) {
	d := NewDirectory(slog.New(slog.DiscardHandler))
	d.MaxClientBytes = 2000
	p := connect(d)
	desc := strings.Repeat("d", 600)
	reg := func(ns string) {
		p.msg(fmt.Sprintf(`{"v":1,"type":"register","ns":%q,"hash":"h","tools":[{"name":"t","description":%q}]}`, ns, desc))
	}
	reg("a")
	reg("b")
	reg("a") // replaces a's share
	if got := p.last()["type"]; got != "registered" {
		t.Fatalf("re-registration refused: %v", p.last())
	}
	reg("c")
	if got := p.last(); got["type"] != "error" || !strings.Contains(got["error"].(string), "bytes") {
		t.Fatalf("register over the byte budget: %v", got)
	}
	if s := d.Summary(); s.Namespaces != 2 {
		t.Fatalf("summary after a refused register: %+v", s)
	}
}

// TestRegistrationBytesOfAllConnectionsAreBounded: every connection's
// registrations are bounded together too (the contract has no credential,
// so one peer may open many sockets); a disconnect gives its share back.
func TestRegistrationBytesOfAllConnectionsAreBounded(t *testing.T) {
	d := NewDirectory(slog.New(slog.DiscardHandler))
	d.MaxTotalBytes = 2000
	desc := strings.Repeat("d", 600)
	reg := func(p *page, ns string) map[string]any {
		p.msg(fmt.Sprintf(`{"v":1,"type":"register","ns":%q,"hash":"h","tools":[{"name":"t","description":%q}]}`, ns, desc))
		return p.last()
	}
	p1, p2, p3 := connect(d), connect(d), connect(d)
	if got := reg(p1, "a"); got["type"] != "registered" {
		t.Fatalf("first: %v", got)
	}
	if got := reg(p2, "b"); got["type"] != "registered" {
		t.Fatalf("second: %v", got)
	}
	if got := reg(p2, "b"); got["type"] != "registered" {
		t.Fatalf("a re-registration replaces its share: %v", got)
	}
	if got := reg(p3, "c"); got["type"] != "error" || !strings.Contains(got["error"].(string), "server's page tool registrations") {
		t.Fatalf("a third connection over the total: %v", got)
	}
	d.Disconnect(p1.c)
	if got := reg(p3, "c"); got["type"] != "registered" {
		t.Fatalf("after a disconnect gave its share back: %v", got)
	}
	if s := d.Summary(); s.Namespaces != 2 || s.Clients != 2 {
		t.Fatalf("summary: %+v", s)
	}
}

// TestCallArgsMustBeAnObject: page_tools_call's args is an object (the
// tool's inputSchema describes one); anything else is refused before it
// reaches the page, and nothing is sent.
func TestCallArgsMustBeAnObject(t *testing.T) {
	d := NewDirectory(quiet())
	p := connect(d)
	p.register("ns", "h", "", "t")
	sent := len(p.sent)
	for _, args := range []string{`"text"`, `[1,2]`, `42`, `{bad`} {
		if _, err := d.Call(context.Background(), CallRequest{Name: "t", Args: json.RawMessage(args)}); err == nil || !strings.Contains(err.Error(), "args must be a JSON object") {
			t.Errorf("args %s: %v", args, err)
		}
	}
	// A browser closes a text frame that is not UTF-8 (1007): such args
	// would drop the page's tools mid-call.
	if _, err := d.Call(context.Background(), CallRequest{Name: "t", Args: json.RawMessage("{\"a\":\"\xff\"}")}); err == nil || !strings.Contains(err.Error(), "valid UTF-8") {
		t.Errorf("args not UTF-8: %v", err)
	}
	if len(p.sent) != sent {
		t.Fatalf("a call with bad args reached the page: %v", p.last())
	}
}

// TestActiveTabListedFirst: with an activation reporter connected,
// page_tools_list puts the entries of windows' active tabs first (the
// MCP-B rule), each group in natural order; with none connected — never
// one, or the last one gone — it keeps the natural order and no entry is
// active (a reporter's view is only as current as the reporter).
func TestActiveTabListedFirst(t *testing.T) {
	tab := func(tabID, win int) string { return fmt.Sprintf(`{"chromeTabId":%d,"windowId":%d}`, tabID, win) }
	d := NewDirectory(quiet())
	a, b, c := connect(d), connect(d), connect(d)
	a.register("a", "h", tab(10, 1), "t")
	b.register("b", "h", tab(11, 1), "t")
	c.register("c", "h", tab(20, 2), "t")
	order := func() string {
		var s []string
		for _, r := range d.List() {
			n := r.NS
			if r.ActiveTab {
				n += "*"
			}
			s = append(s, n)
		}
		return strings.Join(s, ",")
	}
	if got := order(); got != "a,b,c" {
		t.Fatalf("natural order: %s", got)
	}
	ext := connect(d)
	ext.msg(`{"v":1,"type":"activation","tab":{"chromeTabId":11,"windowId":1},"active":true}`)
	if got := order(); got != "b*,a,c" {
		t.Fatalf("window 1's active tab: %s", got)
	}
	ext.msg(`{"v":1,"type":"activation","tab":{"chromeTabId":20,"windowId":2},"active":true}`)
	if got := order(); got != "b*,c*,a" {
		t.Fatalf("two windows' active tabs: %s", got)
	}
	b.register("b", "h2", tab(11, 1), "t", "u") // a re-registration keeps its place
	if got := order(); got != "b*,c*,a" {
		t.Fatalf("after a re-registration: %s", got)
	}
	d.Disconnect(ext.c)
	if got := order(); got != "a,b,c" {
		t.Fatalf("the reporter gone: %s", got)
	}
}

// TestSameHashChurnDoesNotHoldBackTheSignal: a page re-registering an
// unchanged set faster than the window (HMR churn) is silent, and must
// not keep re-arming the debounce either: another page's new tools are
// signalled one window after they registered, while the churn goes on.
func TestSameHashChurnDoesNotHoldBackTheSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := NewDirectory(quiet())
		var mu sync.Mutex
		var texts []string
		d.OnChange = func(c Change) { mu.Lock(); texts = append(texts, c.Text); mu.Unlock() }
		got := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), texts...) }
		defer d.Close()
		a := connect(d)
		a.register("a", "ha", "", "t")
		time.Sleep(time.Second)
		synctest.Wait()
		if g := got(); len(g) != 1 {
			t.Fatalf("first registration: %v", g)
		}
		b := connect(d)
		b.register("b", "hb", "", "u")
		r := connect(d)
		r.msg(`{"v":1,"type":"activation","tab":{"chromeTabId":1,"windowId":1},"active":true}`)
		for range 10 { // 3 s of churn, a re-registration and a repeated activation every 300 ms
			time.Sleep(300 * time.Millisecond)
			a.register("a", "ha", "", "t")
			r.msg(`{"v":1,"type":"activation","tab":{"chromeTabId":1,"windowId":1},"active":true}`)
			synctest.Wait()
			if g := got(); len(g) == 2 {
				if g[1] != "page tools changed: a/t, b/u" {
					t.Fatalf("signal = %q", g[1])
				}
				return
			}
		}
		t.Fatalf("no signal for b's new tools while a re-registered the same set: %v", got())
	})
}
