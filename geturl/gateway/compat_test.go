package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/engine/terminal"
	"github.com/hubdev/hub/geturl/gateway"
	"github.com/hubdev/hub/geturl/internal/corpus"
	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/plugin/pluginhost"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// compatEnv is the full data plane (mutation host, a plugin) over one
// project directory, with sessions of several permissions.
type compatEnv struct {
	t     *testing.T
	root  string
	k     *kernel.Kernel
	srv   *httptest.Server
	table *route.TokenTable
}

func newCompatEnv(t *testing.T) *compatEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"src/a.ts":  "export function f() {}\nexport const g = 1\n",
		"main.go":   "package main\n\nfunc main() {}\n",
		"notes.txt": "hello\nworld\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755)
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mh := mutation.NewHost(mutation.Options{Terminal: &terminal.Config{}})
	ph, err := pluginhost.New(mh, probe{})
	if err != nil {
		t.Fatal(err)
	}
	e := &compatEnv{t: t, root: root, table: &route.TokenTable{},
		k: kernel.New(kernel.Options{Plugins: ph, Mutations: mh, NoRG: true, NoVersions: true})}
	ctx, cancel := context.WithCancel(context.Background())
	shutdown := mh.Run(ctx)
	t.Cleanup(func() { cancel(); shutdown(context.Background()) })
	e.srv = httptest.NewUnstartedServer(nil)
	port := e.srv.Listener.Addr().(*net.TCPAddr).Port
	e.srv.Config.Handler = gateway.New(gateway.Options{Sessions: e.table, Kernel: e.k, Port: port})
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	return e
}

func (e *compatEnv) session(perm route.Permissions, seed string) *capSession {
	e.t.Helper()
	sc, err := sandbox.New(e.root)
	if err != nil {
		e.t.Fatal(err)
	}
	s := &capSession{scope: sc, perm: perm, store: replay.New(nil), state: mutation.NewState(&files.Ledger{}, nil),
		tokens: map[route.Capability]string{route.CapInit: seed + "Init001", route.CapRead: seed + "Read001"}}
	if perm.Mutations() {
		s.tokens[route.CapMutation] = seed + "Mut0001"
	}
	e.table.Add(s)
	return s
}

func (e *compatEnv) origin() string { return "http://" + e.srv.Listener.Addr().String() }

// fetch sends a request-target byte for byte (or a full URL on the
// server's origin).
func (e *compatEnv) fetch(method, target string) (int, string) {
	e.t.Helper()
	target = strings.TrimPrefix(target, e.origin())
	req, err := http.NewRequest(method, e.srv.URL, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.URL = &url.URL{Scheme: "http", Host: e.srv.Listener.Addr().String(), Opaque: target}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type compatAnswer struct {
	OK           bool   `json:"ok"`
	State        string `json:"state"`
	Replayed     bool   `json:"replayed"`
	ErrorCode    string `json:"errorCode"`
	Repair       string `json:"repair"`
	RepairBase   string `json:"repairBase"`
	RepairSuffix string `json:"repairSuffix"`
	Poll         string `json:"poll"`
}

// settled follows a journaled answer's poll URL until the intent has
// finished, as an agent does: a loaded machine may not finish even a
// short command within wait=. Each poll waits server-side; the number
// of polls is bounded, not the time.
func (e *compatEnv) settled(a compatAnswer, body string) (compatAnswer, string) {
	e.t.Helper()
	for i := 0; i < 120 && a.OK && (a.State == "pending" || a.State == "running") && a.Poll != ""; i++ {
		a, body = e.get(a.Poll)
	}
	return a, body
}

func (e *compatEnv) get(target string) (compatAnswer, string) {
	e.t.Helper()
	_, body := e.fetch("GET", target)
	var a compatAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		e.t.Fatalf("GET %s: %v: %s", target, err, body)
	}
	return a, body
}

func content(js string) string { return base64.RawURLEncoding.EncodeToString([]byte(js)) }

// longOf rewrites a compact request (/r?…) to its long route (/read?…).
func longOf(t *testing.T, k *kernel.Kernel, compact string) string {
	t.Helper()
	path, q, hasQ := strings.Cut(compact, "?")
	rt, ok := k.Route(path)
	if !ok {
		t.Fatalf("no route %s", path)
	}
	if hasQ {
		return rt.Long() + "?" + q
	}
	return rt.Long()
}

// rangeID hides the one part of an answer that differs by design
// between two fetches: the id of a stored answer cut into range parts.
var rangeID = regexp.MustCompile(`z[0-9a-f]{12,}`)

// replays hides the count of replays, which each fetch of a journaled
// URL raises.
var replays = regexp.MustCompile(`"replays":[0-9]+`)

// TestLongRoutesAnswerAsCompact: every long route answers byte for byte
// as its compact route — reads, errors and their repairs, base
// refusals both ways, read-only refusals, HEAD — and a mutation through
// the long route is the same intent as through the compact one: the
// second spelling replays, it never runs again.
func TestLongRoutesAnswerAsCompact(t *testing.T) {
	e := newCompatEnv(t)
	full := e.session(route.Permissions{Write: true, Terminal: true}, "A")
	ro := e.session(route.Permissions{}, "B")
	r, m, bro := "/v0/"+full.Token(route.CapRead), "/v0/"+full.Token(route.CapMutation), "/v0/"+ro.Token(route.CapRead)
	e.fetch("GET", m+"/s?blob=b1&i=0&count=1&raw=hi")

	same := func(base, compact string) {
		t.Helper()
		long := longOf(t, e.k, compact)
		for _, method := range []string{"GET", "HEAD"} {
			s1, b1 := e.fetch(method, base+compact)
			s2, b2 := e.fetch(method, base+long)
			if s1 != s2 || rangeID.ReplaceAllString(b1, "z") != rangeID.ReplaceAllString(b2, "z") {
				t.Errorf("%s %s and %s differ:\n %d %.300s\n %d %.300s", method, compact, long, s1, b1, s2, b2)
			}
		}
	}
	for _, c := range []struct{ base, target string }{
		{r, "/r?path=notes.txt"}, {r, "/r?file=notes.txt&start=2&end=2"}, {r, "/r?pth=notes.txt"}, {r, "/r?path=../x"},
		{r, "/r?path=notes.txt&wait=5"}, {r, "/f?name=a"}, {r, "/f?raw=hello"}, {r, "/g?path=src&raw=f"}, {r, "/g?path=src&regex=1&raw=("},
		{r, "/o?path=src/a.ts"}, {r, "/t?path=notes.txt"}, {r, "/t?path="}, {r, "/p"}, {r, "/p?x=1"}, {r, "/k"}, {r, "/k?plugin=probe"},
		{r, "/k?plugin=probe&tool=look&raw={}"}, {r, "/k?plugin=probe&tool=poke&raw={}"}, {r, "/z?last=1&part=0"}, {r, "/z?id=zdeadbeef0000"},
		{r, "/x?wait=1000&raw=echo+hi"}, {r, "/w?path=a&raw=x"}, {r, "/s?path=notes.txt"}, {r, "/j?call=nope"},
		{m, "/r?path=notes.txt"}, {m, "/t?path=notes.txt"}, {m, "/j?call=nope"}, {m, "/b?blob=b1"}, {m, "/b?blob=zz"},
		{m, "/x?wiat=1000&raw=echo+hi"}, {m, "/x?wait=99999&raw=echo+hi"}, {m, "/x?raw=echo+hi&wait=1"}, {m, "/z?last=1"},
		{bro, "/x?wait=1000&raw=echo+hi"}, {bro, "/r?path=notes.txt"},
	} {
		same(c.base, c.target)
	}

	// A mutation: the first spelling runs it, every later one (long or
	// compact) replays the same intent and answers the same bytes.
	// A refused one is journaled too, and replays its refusal.
	for _, compact := range []string{
		"/w?path=new.txt&wait=1500&raw=hello~n", "/x?wait=1500&raw=echo+hi", "/s?blob=b2&i=0&count=1&raw=x",
		"/k?plugin=probe&tool=poke&wait=1500&raw={}", "/e?path=notes.txt&old=world&new=there&wait=1500",
		"/w?path=../out.txt&wait=1500&raw=x", "/e?path=notes.txt&old=nope&new=x&wait=1500",
	} {
		e.settled(e.get(m + compact))
		a, b1 := e.get(m + longOf(t, e.k, compact))
		_, b2 := e.get(m + compact)
		if replays.ReplaceAllString(b1, "") != replays.ReplaceAllString(b2, "") {
			t.Errorf("%s replayed through the long route differs:\n %s\n %s", compact, b1, b2)
		}
		if strings.Contains(compact, "wait=") && a.OK && !a.Replayed {
			t.Errorf("%s through the long route ran again: %s", compact, b1)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.root, "notes.txt")); string(b) != "hello\nthere\n" {
		t.Fatalf("notes.txt %q", b)
	}
}

// TestInitListsCompatibilityEndpoints: Init names the long routes, and
// for every endpoint it advertises, bases[ref] + "/" + tool is served.
func TestInitListsCompatibilityEndpoints(t *testing.T) {
	e := newCompatEnv(t)
	for _, perm := range []route.Permissions{{Write: true, Terminal: true}, {Terminal: true}, {}} {
		s := e.session(perm, fmt.Sprintf("P%v%v", b2i(perm.Write), b2i(perm.Terminal)))
		_, body := e.fetch("GET", "/v0/init/"+s.Token(route.CapInit))
		var c struct {
			Bases     map[string]string    `json:"bases"`
			Endpoints map[string][2]string `json:"endpoints"`
			Compat    string               `json:"compatibilityEndpoints"`
		}
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			t.Fatal(err)
		}
		if c.Compat != "/<tool>" {
			t.Fatalf("compatibilityEndpoints %q: %s", c.Compat, body)
		}
		for tool, ep := range c.Endpoints {
			_, q, _ := strings.Cut(ep[1], "?")
			long := c.Bases[ep[0]] + "/" + tool
			if q != "" {
				long += "?" + q
			}
			a, b := e.get(long)
			if a.ErrorCode == transport.CodeUnknownRoute || a.ErrorCode == transport.CodeWrongCapabilityBase {
				t.Errorf("%s: %s", long, b)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestCallContentAnswersAsCompact: /call?tool=<tool>&content=<base64url>
// serves the tool exactly as its compact route serves the same
// parameters, journal identity included.
func TestCallContentAnswersAsCompact(t *testing.T) {
	e := newCompatEnv(t)
	full := e.session(route.Permissions{Write: true, Terminal: true}, "A")
	r, m := "/v0/"+full.Token(route.CapRead), "/v0/"+full.Token(route.CapMutation)
	for _, c := range []struct{ base, tool, js, compact string }{
		{r, "read", `{"path":"notes.txt"}`, "/r?path=notes.txt"},
		{r, "read", `{"path":["notes.txt","main.go"]}`, "/r?path=notes.txt&path=main.go"},
		{r, "read", `{"file":"notes.txt","start":2,"end":2}`, "/r?file=notes.txt&start=2&end=2"},
		{r, "grep", `{"path":"src","raw":"f"}`, "/g?path=src&raw=f"},
		{r, "grep", `{"path":"src","regex":true,"raw":"("}`, "/g?path=src&regex=true&raw=("},
		{r, "find", `{"name":"a"}`, "/f?name=a"},
		{r, "stat", `{"path":"notes.txt"}`, "/t?path=notes.txt"},
		{r, "project", `{}`, "/p"},
		{r, "plugins", `{"plugin":"probe","tool":"look","raw":"{}"}`, "/k?plugin=probe&tool=look&raw={}"},
		// Refusals of the decoded parameters are the compact route's,
		// repair URL included.
		{r, "read", `{"pth":"notes.txt"}`, "/r?pth=notes.txt"},
		{r, "read", `{"path":"a","file":"b"}`, "/r?path=a&file=b"},
		{r, "read", `{"path":"notes.txt","file":"notes.txt"}`, "/r?path=notes.txt&file=notes.txt"},
		// The repair is built from the decoded text, so it spells a
		// space %20 where an agent may have written +.
		{m, "terminal", `{"wait":99999,"raw":"echo hi"}`, "/x?wait=99999&raw=echo%20hi"},
	} {
		_, want := e.fetch("GET", c.base+c.compact)
		_, got := e.fetch("GET", c.base+"/call?tool="+c.tool+"&content="+content(c.js))
		if want != got {
			t.Errorf("%s %s:\n compact %.300s\n content %.300s", c.tool, c.js, want, got)
		}
	}

	// A mutation sent as content= is the intent the compact URL names.
	first, b0 := e.get(m + "/call?tool=write&content=" + content(`{"path":"c.txt","wait":1500,"raw":"a+b&c=d\n"}`))
	if !first.OK || first.Replayed {
		t.Fatalf("%s", b0)
	}
	e.settled(first, b0)
	a, _ := e.get(m + "/w?path=c.txt&wait=1500&raw=a~qb~ac=d~n")
	if !a.Replayed {
		t.Fatal("the compact spelling of the same write ran again")
	}
	if b, _ := os.ReadFile(filepath.Join(e.root, "c.txt")); string(b) != "a+b&c=d\n" {
		t.Fatalf("c.txt %q", b)
	}

	// The wrong base, both ways: from the mutation base the exact /call
	// on the read base; from the read base no mutation URL, but the
	// suffix to append to bases.m, which then works.
	q := "/call?tool=stat&content=" + content(`{"path":"notes.txt"}`)
	if a, b := e.get(m + q); a.ErrorCode != transport.CodeWrongCapabilityBase || a.Repair != e.origin()+r+q {
		t.Fatalf("%s", b)
	}
	q = "/call?tool=terminal&content=" + content(`{"wait":1500,"raw":"echo hi"}`)
	a, b := e.get(r + q)
	if a.ErrorCode != transport.CodeWrongCapabilityBase || a.Repair != "" || a.RepairBase != "m" || a.RepairSuffix != q || strings.Contains(b, full.Token(route.CapMutation)) {
		t.Fatalf("%s", b)
	}
	if a, b := e.settled(e.get(m + a.RepairSuffix)); !a.OK || a.State != "succeeded" {
		t.Fatalf("%s", b)
	}
}

// TestCallContentStrict: the decoder's refusals, and the repairs a
// deterministic respelling allows.
func TestCallContentStrict(t *testing.T) {
	e := newCompatEnv(t)
	full := e.session(route.Permissions{Write: true, Terminal: true}, "A")
	r := "/v0/" + full.Token(route.CapRead)
	js := `{"path":"notes.txt","raw":">>>???"}`
	std := base64.StdEncoding.EncodeToString([]byte(js))
	if !strings.ContainsAny(std, "+/") {
		t.Fatalf("fixture %q has no standard-alphabet character", std)
	}
	canon := r + "/call?tool=grep&content=" + content(js)
	for _, c := range []struct {
		name, target, code, repair string
	}{
		{"padded", "/call?tool=grep&content=" + content(`{"path":"src","raw":"f"}`) + "=", transport.CodeInvalidContent, r + "/call?tool=grep&content=" + content(`{"path":"src","raw":"f"}`)},
		{"standard alphabet", "/call?tool=grep&content=" + strings.ReplaceAll(std, "+", "%2B"), transport.CodeInvalidContent, canon},
		{"plus read as space", "/call?tool=grep&content=" + std, transport.CodeInvalidContent, canon},
		{"not JSON", "/call?tool=read&content=" + content(`{"path":`), transport.CodeInvalidContent, ""},
		{"duplicate key", "/call?tool=read&content=" + content(`{"path":"a","path":"b"}`), transport.CodeInvalidContent, ""},
		{"null", "/call?tool=read&content=" + content(`{"path":null}`), transport.CodeInvalidContent, ""},
		{"nested", "/call?tool=read&content=" + content(`{"path":{"a":"b"}}`), transport.CodeInvalidContent, ""},
		{"lone surrogate", "/call?tool=grep&content=" + content(`{"path":"src","raw":"\ud800"}`), transport.CodeInvalidContent, ""},
		{"unknown field", "/call?tool=read&content=" + content(`{"path":"a","bogus":"1"}`), transport.CodeUnknownParameter, ""},
		{"raw not taken", "/call?tool=stat&content=" + content(`{"path":"a","raw":"x"}`), transport.CodeUnknownParameter, ""},
		{"missing content", "/call?tool=read", transport.CodeMissingParameter, ""},
		{"unknown tool", "/call?tool=delete&content=" + content(`{}`), transport.CodeInvalidParameter, ""},
		{"tool case", "/call?tool=READ&content=" + content(`{"path":"notes.txt"}`), transport.CodeInvalidParameter, r + "/call?tool=read&content=" + content(`{"path":"notes.txt"}`)},
		{"extra parameter", "/call?tool=read&content=" + content(`{"path":"a"}`) + "&path=b", transport.CodeUnknownParameter, ""},
		{"raw tail", "/call?tool=read&raw=" + content(`{"path":"a"}`), transport.CodeUnknownParameter, ""},
	} {
		a, body := e.get(r + c.target)
		if a.OK || a.ErrorCode != c.code || (c.repair != "" && a.Repair != e.origin()+c.repair) {
			t.Errorf("%s: want %s repair %q, got %s", c.name, c.code, c.repair, body)
			continue
		}
		if a.Repair != "" {
			if fixed, body := e.get(a.Repair); !fixed.OK {
				t.Errorf("%s: the repair %s fails: %s", c.name, a.Repair, body)
			}
		}
	}
}

// TestCorpusThroughCompatibility sends every corpus text through the long
// write route and through /call content=, and requires the exact bytes
// on disk; and reads each back through /read and /call.
func TestCorpusThroughCompatibility(t *testing.T) {
	e := newCompatEnv(t)
	full := e.session(route.Permissions{Write: true}, "A")
	r, m := "/v0/"+full.Token(route.CapRead), "/v0/"+full.Token(route.CapMutation)
	for i, c := range corpus.Cases(t) {
		for _, how := range []string{"long", "content"} {
			rel := fmt.Sprintf("c%02d-%s.txt", i, how)
			var target string
			if how == "long" {
				target = m + "/write?path=" + rel + "&wait=1500&raw=" + transport.Encode(c.Text)
			} else {
				js, _ := json.Marshal(map[string]any{"path": rel, "wait": 1500, "raw": c.Text})
				target = m + "/call?tool=write&content=" + content(string(js))
			}
			if a, body := e.settled(e.get(target)); !a.OK || a.State != "succeeded" {
				t.Errorf("%s %s: %s", c.Name, how, body)
				continue
			}
			if b, _ := os.ReadFile(filepath.Join(e.root, rel)); string(b) != c.Text {
				t.Errorf("%s %s: on disk %q, want %q", c.Name, how, b, c.Text)
			}
		}
		// A grep for the text's first line finds it the same way through
		// every spelling.
		line, _, _ := strings.Cut(c.Text, "\n")
		if strings.TrimSpace(line) == "" {
			continue
		}
		js, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("c%02d-long.txt", i), "raw": line})
		_, want := e.fetch("GET", r+"/g?path="+fmt.Sprintf("c%02d-long.txt", i)+"&raw="+transport.Encode(line))
		_, viaLong := e.fetch("GET", r+"/grep?path="+fmt.Sprintf("c%02d-long.txt", i)+"&raw="+transport.Encode(line))
		_, viaCall := e.fetch("GET", r+"/call?tool=grep&content="+content(string(js)))
		want, viaLong, viaCall = rangeID.ReplaceAllString(want, "z"), rangeID.ReplaceAllString(viaLong, "z"), rangeID.ReplaceAllString(viaCall, "z")
		if want != viaLong || want != viaCall {
			t.Errorf("%s: grep differs:\n %.200s\n %.200s\n %.200s", c.Name, want, viaLong, viaCall)
		}
	}
}

// TestManifestByCapability: the manifest describes what the capability
// it is fetched on may use: on the read base the read tools only and no
// stronger token; on the mutation base both bases and the tools the
// permissions allow; each tool with its routes and parameters.
func TestManifestByCapability(t *testing.T) {
	e := newCompatEnv(t)
	full := e.session(route.Permissions{Write: true, Terminal: true}, "A")
	term := e.session(route.Permissions{Terminal: true}, "T")
	type tool struct {
		Tool, Route, Long, Base string
		Params                  []transport.ParamInfo
		Raw                     string
	}
	type man struct {
		OK          bool
		Capability  string
		Project     string
		Bases       map[string]string
		Permissions map[string]bool
		Limits      map[string]int
		Tools       []tool
	}
	get := func(base string) (man, string) {
		_, body := e.fetch("GET", base+"/manifest")
		var m man
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return m, body
	}
	names := func(m man) []string {
		var out []string
		for _, tl := range m.Tools {
			out = append(out, tl.Tool)
		}
		slices.Sort(out)
		return out
	}

	rm, body := get("/v0/" + full.Token(route.CapRead))
	for _, tok := range []string{full.Token(route.CapMutation), full.Token(route.CapInit)} {
		if strings.Contains(body, tok) {
			t.Fatalf("the read manifest names %s: %s", tok, body)
		}
	}
	if !rm.OK || rm.Capability != "read" || rm.Project != "demo" || len(rm.Bases) != 1 || rm.Permissions["write"] || rm.Permissions["terminal"] {
		t.Fatalf("%s", body)
	}
	if got, want := names(rm), []string{"call", "find", "grep", "manifest", "outline", "plugins", "project", "range", "read", "stat"}; !slices.Equal(got, want) {
		t.Fatalf("read manifest tools %v, want %v", got, want)
	}
	for _, tl := range rm.Tools {
		if tl.Base != "r" {
			t.Errorf("%s on base %q", tl.Tool, tl.Base)
		}
		if tl.Tool == "call" && (len(tl.Params) == 0 || slices.Contains(tl.Params[0].Values, "write")) {
			t.Errorf("read manifest offers /call of %v", tl.Params)
		}
		if tl.Tool == "read" {
			p := tl.Params[0]
			if tl.Route != "/r" || tl.Long != "/read" || p.Name != "path" || p.Repeat != 8 || !slices.Contains(p.Aliases, "file") {
				t.Errorf("read: %+v", tl)
			}
		}
	}
	if rm.Limits["targetBytes"] != transport.MaxTarget || rm.Limits["rawBytes"] != transport.MaxRaw {
		t.Errorf("limits %v", rm.Limits)
	}

	mm, body := get("/v0/" + full.Token(route.CapMutation))
	if strings.Contains(body, full.Token(route.CapInit)) || mm.Capability != "mutation" || len(mm.Bases) != 2 || !mm.Permissions["write"] {
		t.Fatalf("%s", body)
	}
	for _, want := range []string{"write", "edit", "apply_patch", "terminal", "stage", "blob_status", "result", "read"} {
		if !slices.Contains(names(mm), want) {
			t.Errorf("mutation manifest lacks %s", want)
		}
	}
	tm, body := get("/v0/" + term.Token(route.CapMutation))
	for _, no := range []string{"write", "edit", "apply_patch"} {
		if slices.Contains(names(tm), no) {
			t.Errorf("a terminal-only manifest lists %s: %s", no, body)
		}
	}
	// Every tool the manifest lists is served where it says, under both
	// names.
	for _, m := range []struct {
		base string
		man  man
	}{{"/v0/" + full.Token(route.CapRead), rm}, {"/v0/" + full.Token(route.CapMutation), mm}} {
		for _, tl := range m.man.Tools {
			base := m.man.Bases[tl.Base]
			if tl.Base == "any" {
				base = e.origin() + m.base
			}
			for _, p := range []string{tl.Route, tl.Long} {
				if p == "" {
					continue
				}
				a, b := e.get(base + p)
				if a.ErrorCode == transport.CodeUnknownRoute || a.ErrorCode == transport.CodeWrongCapabilityBase || a.ErrorCode == route.CodeMutationsDisabled {
					t.Errorf("%s%s: %s", base, p, b)
				}
			}
		}
	}
	if a, b := e.get("/v0/" + full.Token(route.CapRead) + "/manifest?x=1"); a.ErrorCode != transport.CodeUnknownParameter {
		t.Errorf("a parameter on /manifest: %s", b)
	}
}

// TestCallOfRangeKeepsLastAnswer: /z's answers, refusals included, never
// replace the answer /z?last=1 recovers; /call of the range tool is /z,
// also when its content= is refused before it reaches /z.
func TestCallOfRangeKeepsLastAnswer(t *testing.T) {
	e := newCompatEnv(t)
	s := e.session(route.Permissions{}, "A")
	r := "/v0/" + s.Token(route.CapRead)
	e.fetch("GET", r+"/r?path=notes.txt")
	_, want := e.fetch("GET", r+"/z?last=1")
	for _, q := range []string{
		"/call?tool=range&content=" + content(`{"last":1}`) + "=", "/call?tool=range&content=" + content(`{"last":1,"bogus":1}`),
		"/range?last=1&bogus=1", "/call?tool=range&content=" + content(`{"last":1}`),
	} {
		e.fetch("GET", r+q)
		if _, got := e.fetch("GET", r+"/z?last=1"); got != want {
			t.Fatalf("after %s, /z?last=1 gives %s, want %s", q, got, want)
		}
	}
}
