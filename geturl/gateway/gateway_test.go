package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"log"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

func decodeJSON(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	return m
}

// TestOpaque404 sends every kind of bad token and path: all answers are
// byte-identical, with identical headers, whatever the token resembles.
func TestOpaque404(t *testing.T) {
	e := newEnv(t)
	s := newSession(t, t.TempDir(), route.Permissions{Write: true}, "A")
	e.table.Add(s)
	other := newSession(t, t.TempDir(), route.Permissions{}, "B")
	e.table.Add(other)
	read, mut, ini := s.Token(route.CapRead), s.Token(route.CapMutation), s.Token(route.CapInit)
	altered := read[:7] + "X"
	targets := []string{
		"/", "/favicon.ico", "/v0", "/v0/", "/v0/init/", "/v0/init", "/v0/bootstrap/",
		"/v1/" + read + "/r?path=a",
		"/v0/ZZZZZZZZ/r?path=a", "/v0/" + altered + "/r?path=a", "/v0/" + read[:7] + "/r", "/v0/" + read + "0/r",
		"/v0/" + strings.ToLower(read) + "/r", "/v0/%41Read001/r",
		"/v0/init/" + read, "/v0/init/" + mut, "/v0/bootstrap/" + read, "/v0/init/" + ini[:7], "/v0/init/" + ini + "/x",
		"/v0/" + ini + "/r?path=a", "/v0/" + ini, "/v0/" + ini + "/",
		"/v0//r", "/v0/init/" + ini + "?", // the last one is valid: the control
	}
	var first *response
	for _, target := range targets[:len(targets)-1] {
		r := e.get(target)
		if r.status != http.StatusNotFound {
			t.Fatalf("%s: status %d: %s", target, r.status, r.body)
		}
		if first == nil {
			first = &r
			continue
		}
		if r.body != first.body {
			t.Fatalf("%s: body differs: %s vs %s", target, r.body, first.body)
		}
		for _, h := range []string{"Content-Type", "Cache-Control", "Content-Length", "X-Content-Type-Options"} {
			if r.header.Get(h) != first.header.Get(h) {
				t.Fatalf("%s: header %s differs", target, h)
			}
		}
	}
	if first.body != string(opaque404) {
		t.Fatalf("404 body %s", first.body)
	}
	if r := e.get(targets[len(targets)-1]); r.status != 200 {
		t.Fatalf("control: %d", r.status)
	}
	// A stopped session's tokens are as unknown as never-issued ones.
	e.table.Remove(other)
	if r := e.get("/v0/" + other.Token(route.CapRead) + "/k"); r.status != 404 || r.body != first.body {
		t.Fatalf("removed session: %d %s", r.status, r.body)
	}
	if r := e.get("/v0/" + read + "/k"); r.status != 200 {
		t.Fatalf("removing one session touched another: %d", r.status)
	}
}

func TestHostCheck(t *testing.T) {
	e := newEnv(t)
	s := newSession(t, t.TempDir(), route.Permissions{}, "A")
	e.table.Add(s)
	initPath := "/v0/init/" + s.Token(route.CapInit)
	port := strings.TrimPrefix(e.origin(), "http://127.0.0.1")
	for _, c := range []struct {
		host, public string
		ok           bool
		base         string
	}{
		{"127.0.0.1" + port, "", true, "http://127.0.0.1" + port},
		{"localhost" + port, "", true, "http://localhost" + port},
		{"LOCALHOST" + port, "", true, "http://localhost" + port},
		{"127.0.0.1:1", "", false, ""},
		{"127.0.0.1", "", false, ""},
		{"evil.example" + port, "", false, ""},
		{"evil.example", "", false, ""},
		{"abc.trycloudflare.com", "https://abc.trycloudflare.com", true, "https://abc.trycloudflare.com"},
		{"ABC.trycloudflare.com:443", "https://abc.trycloudflare.com/", true, "https://abc.trycloudflare.com"},
		{"abc.trycloudflare.com:80", "https://abc.trycloudflare.com", false, ""},
		{"xyz.trycloudflare.com", "https://abc.trycloudflare.com", false, ""},
		{"abc.trycloudflare.com.evil.example", "https://abc.trycloudflare.com", false, ""},
		{"127.0.0.1" + port, "https://abc.trycloudflare.com", true, "http://127.0.0.1" + port},
		{"tunnel.example:8443", "https://tunnel.example:8443", true, "https://tunnel.example:8443"},
	} {
		e.publicOrigin = c.public
		r := e.get(initPath, c.host)
		if !c.ok {
			if r.status != http.StatusForbidden || strings.Contains(r.body, s.Token(route.CapRead)) {
				t.Errorf("host %q (public %q): %d %s", c.host, c.public, r.status, r.body)
			}
			continue
		}
		if r.status != 200 {
			t.Errorf("host %q (public %q): %d %s", c.host, c.public, r.status, r.body)
			continue
		}
		bases := decodeJSON(t, r.body)["bases"].(map[string]any)
		if bases["r"] != c.base+"/v0/"+s.Token(route.CapRead) {
			t.Errorf("host %q: base %v, want %s", c.host, bases["r"], c.base)
		}
	}
}

func TestMethods(t *testing.T) {
	e := newEnv(t)
	s := newSession(t, t.TempDir(), route.Permissions{}, "A")
	e.table.Add(s)
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
		for _, target := range []string{"/v0/" + s.Token(route.CapRead) + "/k", "/v0/nothing/r"} {
			r := e.do(m, target)
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, HEAD" {
				t.Fatalf("%s %s: %d", m, target, r.status)
			}
		}
	}
	r := e.do("HEAD", "/v0/"+s.Token(route.CapRead)+"/k")
	if r.status != 200 || r.body != "" || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("HEAD: %d %q", r.status, r.body)
	}
	if _, err := s.Replay().Last(replay.MutationLevel); err == nil {
		t.Fatal("a HEAD answer was stored for /z")
	}
}

// TestCapabilityBaseRepairs: a route of the other base is refused with
// directions to it. On the mutation base that is the exact repair URL on
// the read base; on the read base it is never a URL (a weaker capability
// never names a stronger one) but bases.m's key and the suffix to append
// to it, byte for byte as written.
func TestCapabilityBaseRepairs(t *testing.T) {
	e := newEnv(t, withMutationStubs)
	s := newSession(t, t.TempDir(), route.Permissions{Write: true, Terminal: true}, "A")
	e.table.Add(s)
	ro := newSession(t, t.TempDir(), route.Permissions{}, "B")
	e.table.Add(ro)
	rb, mb := e.origin()+"/v0/"+s.Token(route.CapRead), e.origin()+"/v0/"+s.Token(route.CapMutation)
	for _, c := range []struct {
		name, target, code, repair, suffix string
	}{
		{"mutation route on read base", "/v0/" + s.Token(route.CapRead) + "/x?wait=1000&raw=npm+test", transport.CodeWrongCapabilityBase, "", "/x?wait=1000&raw=npm+test"},
		{"query kept byte for byte", "/v0/" + s.Token(route.CapRead) + "/w?path=a%20b&raw=x~n&wait=1", transport.CodeWrongCapabilityBase, "", "/w?path=a%20b&raw=x~n&wait=1"},
		{"read route on mutation base", "/v0/" + s.Token(route.CapMutation) + "/k?plugin=x", "", "", ""},
		{"/s?path on read base is stat", "/v0/" + s.Token(route.CapRead) + "/s?path=src/a.ts", transport.CodeWrongCapabilityBase, rb + "/t?path=src/a.ts", ""},
		{"/s staging on read base", "/v0/" + s.Token(route.CapRead) + "/s?blob=b&i=0&count=1&raw=x", transport.CodeWrongCapabilityBase, "", "/s?blob=b&i=0&count=1&raw=x"},
		{"mutation route, read-only session", "/v0/" + ro.Token(route.CapRead) + "/x?raw=ls", route.CodeMutationsDisabled, "", ""},
		{"unknown route", "/v0/" + s.Token(route.CapRead) + "/nope", transport.CodeUnknownRoute, "", ""},
		{"no route", "/v0/" + s.Token(route.CapRead), transport.CodeUnknownRoute, "", ""},
		{"nested route", "/v0/" + s.Token(route.CapRead) + "/r/x", transport.CodeUnknownRoute, "", ""},
		{"mutation base, unknown route", "/v0/" + s.Token(route.CapMutation) + "/q", transport.CodeUnknownRoute, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.get(c.target)
			if r.status != 200 {
				t.Fatalf("status %d", r.status)
			}
			if strings.Contains(r.body, s.Token(route.CapMutation)) && !strings.Contains(c.target, s.Token(route.CapMutation)) {
				t.Fatalf("the read base named the mutation base: %s", r.body)
			}
			m := decodeJSON(t, r.body)
			if c.code == "" {
				if m["ok"] != true && m["errorCode"] != route.CodeUnknownPlugin {
					t.Fatalf("%s", r.body)
				}
				return
			}
			if m["ok"] != false || m["errorCode"] != c.code {
				t.Fatalf("%s", r.body)
			}
			if got, _ := m["repair"].(string); got != c.repair {
				t.Fatalf("repair %q, want %q", got, c.repair)
			}
			next := strings.TrimPrefix(c.repair, e.origin())
			if c.suffix != "" {
				if m[route.FieldRepairBase] != "m" || m[route.FieldRepairSuffix] != c.suffix || m["agentAction"] != fault.ActionCorrectRequest {
					t.Fatalf("directions to bases.m: %s", r.body)
				}
				next = strings.TrimPrefix(mb, e.origin()) + c.suffix
			} else if _, ok := m[route.FieldRepairSuffix]; ok {
				t.Fatalf("a suffix beside a repair URL: %s", r.body)
			}
			if next != "" {
				// the directions are exact: following them reaches the route
				rr := e.get(next)
				if rm := decodeJSON(t, rr.body); rm["errorCode"] == transport.CodeWrongCapabilityBase {
					t.Fatalf("repair loops: %s", rr.body)
				}
			}
		})
	}
	// read routes on the mutation base repair to the read base, with the
	// exact URL: the read base is the weaker one
	k := e.k
	k.Handle("/r", &transport.Spec{Route: "/r", Params: []transport.Param{{Name: "path"}}},
		func(context.Context, *route.Call) (any, *transport.Error) { return map[string]bool{"ok": true}, nil })
	r := e.get("/v0/" + s.Token(route.CapMutation) + "/r?path=a~nb")
	if m := decodeJSON(t, r.body); m["errorCode"] != transport.CodeWrongCapabilityBase || m["repair"] != rb+"/r?path=a~nb" || m["agentAction"] != fault.ActionFetchRepair {
		t.Fatalf("%s", r.body)
	}
}

// TestUnservedMutationRoutesAreUnknown: until the mutation kernel lands, a
// mutation route is not routed on either base.
func TestUnservedMutationRoutesAreUnknown(t *testing.T) {
	e := newEnv(t)
	s := newSession(t, t.TempDir(), route.Permissions{Write: true, Terminal: true}, "A")
	e.table.Add(s)
	for _, tok := range []string{s.Token(route.CapRead), s.Token(route.CapMutation)} {
		for _, route := range []string{"/w", "/e", "/a", "/x", "/s?blob=a", "/b", "/j"} {
			r := e.get("/v0/" + tok + route)
			if m := decodeJSON(t, r.body); m["errorCode"] != transport.CodeUnknownRoute {
				t.Fatalf("%s: %s", route, r.body)
			}
		}
	}
}

// TestRangeFallback: a large answer leads with rangeFallback, is stored,
// and /z reconstructs the stored answer exactly, part by part, following
// next URLs.
func TestRangeFallback(t *testing.T) {
	big := strings.Repeat("ä€😀 & <x> ~ line\n", 600)
	e := newEnv(t, func(k *kernel.Kernel) {
		k.Handle("/t", &transport.Spec{Route: "/t"}, func(context.Context, *route.Call) (any, *transport.Error) {
			return map[string]any{"ok": true, "content": big}, nil
		})
	})
	s := newSession(t, t.TempDir(), route.Permissions{}, "A")
	e.table.Add(s)
	r := e.get("/v0/" + s.Token(route.CapRead) + "/t")
	if !strings.HasPrefix(r.body, `{"rangeFallback":{"id":"`) {
		t.Fatalf("no leading rangeFallback: %.200s", r.body)
	}
	m := decodeJSON(t, r.body)
	if m["content"] != big {
		t.Fatal("content changed")
	}
	fb := m["rangeFallback"].(map[string]any)
	id := fb["id"].(string)
	want, _ := transport.Marshal(map[string]any{"ok": true, "content": big})
	if int(fb["bytes"].(float64)) != len(want) {
		t.Fatalf("bytes %v, want %d", fb["bytes"], len(want))
	}
	next := fb["first"].(string)
	if next != e.origin()+"/v0/"+s.Token(route.CapRead)+"/z?id="+id+"&part=0" {
		t.Fatalf("first %q", next)
	}
	var got []byte
	for i := 0; next != ""; i++ {
		if i > 100 {
			t.Fatal("too many parts")
		}
		rr := e.get(strings.TrimPrefix(next, e.origin()))
		if rr.header.Get("Content-Type") != "text/plain; charset=utf-8" || rr.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("headers %v", rr.header)
		}
		meta, chunk, err := replay.Parse([]byte(rr.body))
		if err != nil {
			t.Fatalf("%v: %.200s", err, rr.body)
		}
		if len(chunk) > replay.PartSize {
			t.Fatalf("part of %d bytes", len(chunk))
		}
		got = append(got, chunk...)
		next = meta.Next
	}
	if !bytes.Equal(got, want) {
		t.Fatal("reconstruction differs")
	}
	// range reads did not replace the last pointer; last=1 is the same
	rr := e.get("/v0/" + s.Token(route.CapRead) + "/z?last=1&part=0")
	meta, _, err := replay.Parse([]byte(rr.body))
	if err != nil || meta.ID != id {
		t.Fatalf("last=1: %v %+v", err, meta)
	}
	// offset mode, also on the mutation base? (read-only session: read base)
	rr = e.get("/v0/" + s.Token(route.CapRead) + "/z?id=" + id + "&offset=1&length=3")
	meta, chunk, err := replay.Parse([]byte(rr.body))
	if err != nil || meta.Offset != 0 && meta.Offset != 1 || len(chunk) == 0 || !strings.Contains(meta.Next, "offset=") {
		t.Fatalf("offset: %v %+v %q", err, meta, chunk)
	}
	// bad ids and modes are structured
	for target, code := range map[string]string{
		"/z?id=zdeadbeef0000":                       kernel.CodeUnknownResponse,
		"/z?id=" + id + "&part=50":                  kernel.CodeRangeOutOfBounds,
		"/z?id=" + id + "&part=0&offset=0&length=5": transport.CodeAmbiguousRange,
		"/z?last=1&id=" + id:                        transport.CodeConflictingParams,
		"/z":                                        transport.CodeMissingParameter,
		"/z?id=" + id + "&offset=5":                 transport.CodeMissingParameter,
	} {
		rr := e.get("/v0/" + s.Token(route.CapRead) + target)
		if m := decodeJSON(t, rr.body); m["errorCode"] != code {
			t.Errorf("%s: %s", target, rr.body)
		}
	}
	// nor did those errors: last=1 still reads the large answer
	rr = e.get("/v0/" + s.Token(route.CapRead) + "/z?last=1&part=999")
	if m := decodeJSON(t, rr.body); m["ok"] != false {
		t.Fatalf("part=999: %s", rr.body)
	}
	rr = e.get("/v0/" + s.Token(route.CapRead) + "/z?last=1&part=0")
	if meta, _, err := replay.Parse([]byte(rr.body)); err != nil || meta.ID != id {
		t.Fatalf("last=1 after /z errors: %v %+v", err, meta)
	}
}

func TestSmallAnswersAreStoredWithoutFallback(t *testing.T) {
	e := newEnv(t)
	s := newSession(t, t.TempDir(), route.Permissions{}, "A")
	e.table.Add(s)
	r := e.get("/v0/" + s.Token(route.CapRead) + "/k")
	if r.body != `{"ok":true,"plugins":[]}` {
		t.Fatalf("%s", r.body)
	}
	rr := e.get("/v0/" + s.Token(route.CapRead) + "/z?last=1")
	_, chunk, err := replay.Parse([]byte(rr.body))
	if err != nil || string(chunk) != r.body {
		t.Fatalf("%v %q", err, chunk)
	}
	for _, h := range []string{"Cache-Control"} {
		if r.header.Get(h) != "no-store" {
			t.Fatal(h)
		}
	}
}

func TestPluginDiscovery(t *testing.T) {
	e := newEnv(t)
	s := newSession(t, t.TempDir(), route.Permissions{}, "A")
	e.table.Add(s)
	base := "/v0/" + s.Token(route.CapRead)
	for target, code := range map[string]string{
		"/k?plugin=opencode-control":       route.CodeUnknownPlugin,
		"/k?plugin=x&tool=y&raw={\"a\":1}": route.CodeUnknownPlugin,
		"/k?tool=y":                        transport.CodeMissingParameter,
		"/k?plugn=x":                       transport.CodeUnknownParameter,
		"/k?plugin=x&tool=y&blob=b&raw={}": transport.CodeConflictingContent,
	} {
		r := e.get(base + target)
		if m := decodeJSON(t, r.body); m["errorCode"] != code {
			t.Errorf("%s: %s", target, r.body)
		}
	}
	r := e.get(base + "/k?plugn=x")
	if m := decodeJSON(t, r.body); m["repair"] != e.origin()+base+"/k?plugin=x" {
		t.Fatalf("typo repair: %s", r.body)
	}
}

// TestTokensNeverLogged drives every kind of request with a capturing
// logger: no token, and no query text, reaches a log line.
func TestTokensNeverLogged(t *testing.T) {
	var buf bytes.Buffer
	e := newEnv(t, withMutationStubs)
	e.gw.log = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newSession(t, t.TempDir(), route.Permissions{Write: true}, "A")
	e.table.Add(s)
	for _, target := range []string{
		"/v0/init/" + s.Token(route.CapInit), "/v0/bootstrap/" + s.Token(route.CapInit),
		"/v0/" + s.Token(route.CapRead) + "/k?plugin=secretvalue", "/v0/" + s.Token(route.CapRead) + "/x?raw=secretvalue",
		"/v0/" + s.Token(route.CapMutation) + "/w?path=secretvalue", "/v0/" + s.Token(route.CapRead) + "/" + s.Token(route.CapMutation),
		"/v0/" + s.Token(route.CapRead)[:7] + "Q/r", "/v0/init/" + s.Token(route.CapRead),
	} {
		e.get(target)
	}
	e.do("POST", "/v0/"+s.Token(route.CapRead)+"/k")
	e.get("/v0/init/"+s.Token(route.CapInit), "evil.example")
	out := buf.String()
	for _, secret := range []string{s.Token(route.CapInit), s.Token(route.CapRead), s.Token(route.CapMutation), s.Token(route.CapRead)[:7], "secretvalue"} {
		if strings.Contains(out, secret) {
			t.Fatalf("log contains %q:\n%s", secret, out)
		}
	}
	if strings.Count(out, "geturl request") != 10 {
		t.Fatalf("expected one line per request:\n%s", out)
	}
	if RedactPath("/v0/AbCd1234/r?path=x") != "/v0/…/r" || RedactPath("/v0/init/AbCd1234") != "/v0/init/…" {
		t.Fatal("RedactPath")
	}
}

// TestSemicolonsAreContent: ; in a query is content, reaches the route
// intact, and net/http logs no warning about it.
func TestSemicolonsAreContent(t *testing.T) {
	var seen string
	e := newEnv(t, func(k *kernel.Kernel) {
		k.Handle("/t", &transport.Spec{Route: "/t", Raw: true}, func(_ context.Context, c *route.Call) (any, *transport.Error) {
			seen, _ = c.Args.Raw()
			return map[string]bool{"ok": true}, nil
		})
	})
	var errLog bytes.Buffer
	e.srv.Config.ErrorLog = log.New(&errLog, "", 0)
	s := newSession(t, t.TempDir(), route.Permissions{}, "A")
	e.table.Add(s)
	e.get("/v0/" + s.Token(route.CapRead) + "/t?raw=cd+src;make;echo+a&b")
	if seen != "cd src;make;echo a&b" {
		t.Fatalf("raw %q", seen)
	}
	if errLog.Len() > 0 {
		t.Fatalf("server logged: %s", errLog.String())
	}
}

// TestObserve: authenticated requests reach the activity hook with their
// route, tool and outcome; bad tokens never do.
func TestObserve(t *testing.T) {
	var events []Event
	e := newEnv(t)
	e.gw.opts.Observe = func(ev Event) { events = append(events, ev) }
	s := newSession(t, t.TempDir(), route.Permissions{}, "A")
	e.table.Add(s)
	e.get("/v0/init/" + s.Token(route.CapInit))
	e.get("/v0/" + s.Token(route.CapRead) + "/k")
	e.get("/v0/" + s.Token(route.CapRead) + "/k?plugn=x")
	e.get("/v0/" + s.Token(route.CapRead) + "/nope")
	e.get("/v0/ZZZZZZZZ/k")
	if len(events) != 4 {
		t.Fatalf("%d events", len(events))
	}
	want := []struct{ route, tool, code string }{{"init", "", ""}, {"/k", "plugins", ""}, {"/k", "plugins", transport.CodeUnknownParameter}, {"unknown", "", transport.CodeUnknownRoute}}
	for i, w := range want {
		ev := events[i]
		if ev.Route != w.route || ev.Tool != w.tool || ev.ErrorCode != w.code || ev.Status != 200 || ev.Session != s || ev.Bytes == 0 {
			t.Fatalf("event %d: %+v", i, ev)
		}
	}
}

// TestRangeFallbackLevels: /z replays an answer only on the base it was
// answered on or a stronger one. The read base refuses the mutation
// base's answers (they name bases.m) with directions to bases.m, and never
// falls back to an older read answer for last=1 — the agent would take it
// for the one it lost.
func TestRangeFallbackLevels(t *testing.T) {
	e := newEnv(t, withMutationStubs)
	s := newSession(t, t.TempDir(), route.Permissions{Write: true}, "A")
	e.table.Add(s)
	rb, mb := "/v0/"+s.Token(route.CapRead), "/v0/"+s.Token(route.CapMutation)
	readAnswer := e.get(rb + "/k").body
	mutAnswer := e.get(mb + "/w?path=a").body
	chunk := func(base, q string) (string, map[string]any) {
		t.Helper()
		r := e.get(base + q)
		if _, c, err := replay.Parse([]byte(r.body)); err == nil {
			return string(c), nil
		}
		return "", decodeJSON(t, r.body)
	}
	if c, _ := chunk(mb, "/z?last=1&part=0"); c != mutAnswer {
		t.Fatalf("mutation base, last=1: %q", c)
	}
	c, m := chunk(rb, "/z?last=1&part=0")
	if c != "" || m["errorCode"] != transport.CodeWrongCapabilityBase || m[route.FieldRepairSuffix] != "/z?last=1&part=0" || m["repair"] != nil {
		t.Fatalf("read base, last=1 after a mutation answer: %q %v", c, m)
	}
	mid := regexp.MustCompile(`"id":"(z[0-9a-f]+)"`).FindStringSubmatch(e.get(mb + "/z?last=1").body)[1]
	if _, m := chunk(rb, "/z?id="+mid+"&offset=0&length=5"); m["errorCode"] != transport.CodeWrongCapabilityBase ||
		m[route.FieldRepairSuffix] != "/z?id="+mid+"&offset=0&length=5" {
		t.Fatalf("read base, id of a mutation answer: %v", m)
	}
	if c, _ := chunk(mb, "/z?id="+mid); c != mutAnswer {
		t.Fatalf("mutation base, id: %q", c)
	}
	// A read answer is the last again: both bases replay it.
	e.get(rb + "/k")
	for _, b := range []string{rb, mb} {
		if c, _ := chunk(b, "/z?last=1"); c != readAnswer {
			t.Fatalf("%s: last=1 after a read answer: %q", b, c)
		}
	}
}
