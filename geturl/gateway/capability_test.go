package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/gateway"
	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/plugin"
	"github.com/hubdev/hub/geturl/plugin/pluginhost"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// probe is a plugin with a read tool, a mutation tool, and a tool
// classified by its action; "big" answers more than one range part, so
// the answer carries a rangeFallback.
type probe struct{}

func (probe) ID() string                    { return "probe" }
func (probe) Description() string           { return "probes" }
func (probe) Status(context.Context) string { return "ready" }
func (probe) Tools() []plugin.Tool {
	return []plugin.Tool{{Name: "look"}, {Name: "poke", Mutation: true}, {Name: "mixed", Mutation: true}, {Name: "big", Mutation: true}}
}

func (probe) Classify(tool string, args json.RawMessage) (bool, error) {
	switch tool {
	case "look":
		return false, nil
	case "poke", "big":
		return true, nil
	case "mixed":
		return strings.Contains(string(args), "set"), nil
	}
	return false, plugin.Errorf("unknown_tool", false, "%s", tool)
}

func (probe) Call(_ context.Context, _ plugin.Authority, tool string, _ json.RawMessage) (json.RawMessage, error) {
	if tool == "big" {
		return json.RawMessage(`{"text":"` + strings.Repeat("x", 3*replay.PartSize) + `"}`), nil
	}
	return json.RawMessage(`{"tool":"` + tool + `"}`), nil
}

type capSession struct {
	scope  *sandbox.Scope
	perm   route.Permissions
	store  *replay.Store
	tokens map[route.Capability]string
	state  *mutation.State
}

func (s *capSession) Scope() *sandbox.Scope                 { return s.scope }
func (s *capSession) Permissions() route.Permissions        { return s.perm }
func (s *capSession) Replay() *replay.Store                 { return s.store }
func (s *capSession) Coverage() route.Coverage              { return s.state.Ledger }
func (s *capSession) Project() string                       { return "demo" }
func (s *capSession) Token(c route.Capability) string       { return s.tokens[c] }
func (s *capSession) Mutations() *mutation.State            { return s.state }
func (s *capSession) tok(c route.Capability) (string, bool) { t, ok := s.tokens[c]; return t, ok }

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// TestWeakerBaseNeverNamesStronger walks every declared route (and a few
// undeclared ones) with many kinds of query — valid, repairable, wrong —
// over GET and HEAD, on every capability of a session with mutations and
// of a read-only one, with the full kernel: mutations and plugins
// installed. No answer on a weaker base, body or header, may contain a
// stronger capability's token (Init > mutation > read), nor any token of
// another session. Before each request on a weaker base, the session's
// last answer is made one from the mutation base, so whatever /z could
// replay is a mutation answer.
func TestWeakerBaseNeverNamesStronger(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"src/a.ts":  "export function f() {}\n",
		"main.go":   "package main\n\nfunc main() {}\n",
		"notes.txt": "hello\n",
		"big.txt":   strings.Repeat("line of text\n", 4000),
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755)
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(root, "dir"), 0o755)

	mh := mutation.NewHost(mutation.Options{})
	ph, err := pluginhost.New(mh, probe{})
	if err != nil {
		t.Fatal(err)
	}
	k := kernel.New(kernel.Options{Plugins: ph, Mutations: mh, NoRG: true, NoVersions: true})
	ctx, cancel := context.WithCancel(context.Background())
	shutdown := mh.Run(ctx)
	t.Cleanup(func() { cancel(); shutdown(context.Background()) })
	table := &route.TokenTable{}
	srv := httptest.NewUnstartedServer(nil)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	srv.Config.Handler = gateway.New(gateway.Options{Sessions: table, Kernel: k, Port: port})
	srv.Start()
	t.Cleanup(srv.Close)

	newSession := func(perm route.Permissions, seed string) *capSession {
		sc, err := sandbox.New(root)
		if err != nil {
			t.Fatal(err)
		}
		s := &capSession{scope: sc, perm: perm, store: replay.New(nil), state: mutation.NewState(&files.Ledger{}, nil),
			tokens: map[route.Capability]string{route.CapInit: seed + "Init001", route.CapRead: seed + "Read001"}}
		if perm.Mutations() {
			s.tokens[route.CapMutation] = seed + "Mut0001"
		}
		table.Add(s)
		return s
	}
	full := newSession(route.Permissions{Write: true, Terminal: true}, "A")
	ro := newSession(route.Permissions{}, "B")
	sessions := []*capSession{full, ro}

	fetch := func(method, target string) (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL = &url.URL{Scheme: "http", Host: srv.Listener.Addr().String(), Opaque: target}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}

	mutBase := "/v0/" + full.Token(route.CapMutation)
	lastID := regexp.MustCompile(`^GETMCP_RANGE \{"id":"(z[0-9a-f]+)"`)
	// A staged blob, so blob= reaches the routes that consume one.
	fetch("GET", mutBase+"/s?blob=b1&i=0&count=1&raw={}")

	// Every route of the table, and routes that are not.
	routes := []string{"", "/", "/nope", "/r/x", "/Z", "/manifest", "/call", "/Read"}
	for _, rt := range k.Routes() {
		routes = append(routes, rt.Path, rt.Long())
	}
	fill := strings.NewReplacer("<p>", "src/a.ts", "<part>", "a", "<literal>", "f", "<content>", "hi", "<a>", "f", "<b>", "g",
		"<patch>", "***+Begin+Patch~n***+End+Patch~n", "<command>", "echo+hi", "<id>", "b1", "<n>", "0", "<N>", "1", "<chunk>", "x")
	queries := []string{
		"", "?", "?path=src/a.ts", "?path=notes.txt", "?path=main.go", "?path=big.txt", "?path=dir", "?path=../x", "?path=",
		"?file=src/a.ts", "?pth=src/a.ts", "?path=src/a.ts&start=1&end=2", "?name=a", "?raw=f", "?path=src&raw=f",
		"?wiat=1000&raw=echo+hi", "?wait=99999&raw=echo+hi", "?raw=echo+hi&wait=1", "?wait=1000&raw=echo+hi",
		"?bg=1&raw=sleep+1", "?path=new.txt&wait=1000&raw=hi", "?path=src/a.ts&old=f&new=g&wait=1000",
		"?blob=b1&i=0&count=1&raw=x", "?blob=b1", "?blob=b1&count=1", "?blob=zz&i=0&count=2&raw=x", "?call=auto:write:abc", "?call=nope",
		"?plugin=probe", "?plugin=nope", "?plugin=probe&tool=nope&raw={}", "?plugin=probe&tool=look&raw={}",
		"?plugin=probe&tool=poke&raw={}", "?plugin=probe&tool=poke&wait=1000&raw={}", `?plugin=probe&tool=mixed&raw={"a":"set"}`,
		`?plugin=probe&tool=mixed&raw={"a":"get"}`, "?plugin=probe&tool=look&wait=1000&raw={}", "?plugin=probe&tool=look&blob=b1&count=1",
		"?plugin=probe&tool=poke&blob=b1&count=1", "?last=1", "?last=1&part=0", "?last=1&part=9", "?last=1&offset=0&length=10",
		"?id={last}&part=0", "?id={last}&offset=1&length=5", "?id={last}&part=99", "?id=zdeadbeef0000",
		// /call's content= of tools on both bases, and its repairs.
		"?tool=terminal&content=" + b64(`{"wait":1000,"raw":"echo hi"}`), "?tool=write&content=" + b64(`{"path":"n.txt","raw":"x"}`),
		"?tool=plugins&content=" + b64(`{"plugin":"probe","tool":"poke","raw":"{}"}`), "?tool=range&content=" + b64(`{"last":1,"part":0}`),
		"?tool=read&content=" + b64(`{"pth":"notes.txt"}`), "?tool=stat&content=" + b64(`{"path":"notes.txt"}`) + "=",
		"?tool=result&content=" + b64(`{"call":"nope"}`), "?tool=READ&content=" + b64(`{"path":"notes.txt"}`),
	}
	for _, rt := range k.Routes() {
		if rt.Init != "" {
			if _, q, ok := strings.Cut(fill.Replace(rt.Init), "?"); ok {
				queries = append(queries, "?"+q)
			}
		}
	}

	// forbidden lists, per base, the tokens no answer on it may contain.
	type base struct {
		name      string
		path      string
		forbidden []string
	}
	var bases []base
	for _, s := range sessions {
		others := func(own ...route.Capability) []string {
			var out []string
			for _, o := range sessions {
				for _, c := range []route.Capability{route.CapInit, route.CapRead, route.CapMutation} {
					tok, ok := o.tok(c)
					keep := o == s
					for _, c2 := range own {
						keep = keep && c != c2
					}
					if ok && (o != s || keep) {
						out = append(out, tok)
					}
				}
			}
			return out
		}
		// The read base may name itself only; the mutation base itself
		// and the read base.
		bases = append(bases, base{s.Token(route.CapRead) + " read", "/v0/" + s.Token(route.CapRead), others(route.CapRead)})
		if tok, ok := s.tok(route.CapMutation); ok {
			bases = append(bases, base{tok + " mutation", "/v0/" + tok, others(route.CapRead, route.CapMutation)})
		}
	}

	checked := 0
	for _, b := range bases {
		for _, route := range routes {
			for _, q := range queries {
				for _, method := range []string{"GET", "HEAD"} {
					// The last answer of the session is one from the
					// mutation base: an incomplete stage names bases.m.
					// {last} is its id.
					fetch("GET", mutBase+"/s?blob=last&i=0&count=2&raw=x")
					_, _, z := fetch("GET", mutBase+"/z?last=1&length=1&offset=0")
					m := lastID.FindStringSubmatch(z)
					if m == nil {
						t.Fatalf("no last answer on the mutation base: %s", z)
					}
					target := b.path + route + strings.ReplaceAll(q, "{last}", m[1])
					status, header, body := fetch(method, target)
					checked++
					for _, tok := range b.forbidden {
						if strings.Contains(body, tok) {
							t.Errorf("%s %s (%s base): the answer names %s:\n%.400s", method, target, b.name, tok, body)
						}
						for name, vs := range header {
							for _, v := range vs {
								if strings.Contains(v, tok) {
									t.Errorf("%s %s (%s base): header %s names %s", method, target, b.name, name, tok)
								}
							}
						}
					}
					if status != http.StatusOK && status != http.StatusNotFound {
						t.Errorf("%s %s: status %d", method, target, status)
					}
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d requests walked", checked)
	}
	// The walk reached the answers that used to name the mutation base.
	// A long route's suffix is its compact route's: it answers as that one.
	suffixOf := map[string]string{"/terminal?wait=1000&raw=echo+hi": "/x?wait=1000&raw=echo+hi"}
	for _, target := range []string{"/x?wait=1000&raw=echo+hi", "/k?plugin=probe&tool=poke&raw={}", "/z?last=1&part=0",
		"/terminal?wait=1000&raw=echo+hi", "/call?tool=terminal&content=" + b64(`{"wait":1000,"raw":"echo hi"}`)} {
		fetch("GET", mutBase+"/s?blob=last&i=0&count=2&raw=x")
		_, _, body := fetch("GET", "/v0/"+full.Token(route.CapRead)+target)
		var e struct{ ErrorCode, Repair, RepairBase, RepairSuffix string }
		json.Unmarshal([]byte(body), &e)
		want := target
		if s, ok := suffixOf[target]; ok {
			want = s
		}
		if e.ErrorCode != transport.CodeWrongCapabilityBase || e.Repair != "" || e.RepairBase != "m" || e.RepairSuffix != want {
			t.Errorf("%s on the read base: %s", target, body)
		}
		// bases.m + repairSuffix is the request the agent meant.
		if _, _, body := fetch("GET", mutBase+e.RepairSuffix); strings.Contains(body, transport.CodeWrongCapabilityBase) {
			t.Errorf("%s on the mutation base: %s", e.RepairSuffix, body)
		}
	}
}
