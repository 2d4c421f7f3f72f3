package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hubdev/hub/geturl/route"
)

// TestInitSize measures the fully enabled contract (mutations and plugin
// discovery on) against the spec's 1.6 KiB ceiling on the local origin.
func TestInitSize(t *testing.T) {
	e := newEnv(t, withMutationStubs)
	s := newSession(t, t.TempDir(), route.Permissions{Write: true, Terminal: true}, "A")
	e.table.Add(s)
	r := e.get("/v0/init/" + s.Token(route.CapInit))
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if !utf8.ValidString(r.body) {
		t.Fatal("init is not UTF-8")
	}
	t.Logf("init contract: %d bytes on %s\n%s", len(r.body), e.origin(), r.body)
	if len(r.body) > MaxInit {
		t.Fatalf("init contract is %d bytes; the ceiling is %d", len(r.body), MaxInit)
	}
	var c struct {
		Bases     map[string]string    `json:"bases"`
		Endpoints map[string][2]string `json:"endpoints"`
		Root      string               `json:"root"`
		Perm      map[string]bool      `json:"permissions"`
	}
	if err := json.Unmarshal([]byte(r.body), &c); err != nil {
		t.Fatal(err)
	}
	if c.Bases["r"] != e.origin()+"/v0/"+s.Token(route.CapRead) || c.Bases["m"] != e.origin()+"/v0/"+s.Token(route.CapMutation) {
		t.Fatalf("bases %v", c.Bases)
	}
	if c.Endpoints["plugins"] != [2]string{"r", "/k"} || c.Endpoints["terminal"][0] != "m" || c.Root != "/project" {
		t.Fatalf("endpoints %v root %q", c.Endpoints, c.Root)
	}
	if strings.Contains(r.body, s.Scope().Root()) {
		t.Fatal("init names the host path")
	}
	// Through a quick tunnel the origin is longer (it appears twice): the
	// contract must still fit.
	e.publicOrigin = "https://marked-vision-brought-tommy.trycloudflare.com"
	r = e.get("/v0/init/"+s.Token(route.CapInit), "marked-vision-brought-tommy.trycloudflare.com")
	t.Logf("through a quick tunnel: %d bytes", len(r.body))
	if r.status != 200 || len(r.body) > MaxInit {
		t.Fatalf("tunnel init: %d, %d bytes", r.status, len(r.body))
	}
}

// A session without write permission is never told to use the file tools
// it cannot reach: a terminal-only contract keeps only the polling rule.
func TestInitRulesFollowPermissions(t *testing.T) {
	e := newEnv(t, withMutationStubs)
	for _, p := range []route.Permissions{{Terminal: true}, {}} {
		s := newSession(t, t.TempDir(), p, "A")
		e.table.Add(s)
		r := e.get("/v0/init/" + s.Token(route.CapInit))
		var c struct {
			Endpoints map[string][2]string `json:"endpoints"`
			Rules     []string             `json:"rules"`
		}
		if err := json.Unmarshal([]byte(r.body), &c); err != nil {
			t.Fatal(err)
		}
		rules := strings.Join(c.Rules, "\n")
		for _, route := range []string{"/e", "/w", "/a"} {
			if strings.Contains(rules, route) {
				t.Errorf("%+v: the rules name %s, which this session cannot use: %s", p, route, rules)
			}
		}
		if _, ok := c.Endpoints["result"]; ok != strings.Contains(rules, "poll /j") {
			t.Errorf("%+v: /j is served (%v) but the polling rule is %q", p, ok, rules)
		}
	}
}

// Init declares no parameters, and the spec's query rules are strict:
// parameters are refused with the bare Init URL as the exact repair, not
// ignored. A bare ? (or a stray &, as on every route) carries none.
func TestInitRefusesParameters(t *testing.T) {
	e := newEnv(t, withMutationStubs)
	s := newSession(t, t.TempDir(), route.Permissions{Write: true}, "A")
	e.table.Add(s)
	for _, pre := range []string{"/v0/init/", "/v0/bootstrap/"} {
		bare := pre + s.Token(route.CapInit)
		for _, tc := range []struct{ query, code, detail string }{
			{"utm_source=x", "unknown_parameter", "utm_source"},
			{"a=1&b", "unknown_parameter", "a; b"},
			{"raw=anything", "unknown_parameter", "raw"},
			{"=1", "unknown_parameter", "a parameter with no name"},
		} {
			r := e.get(bare + "?" + tc.query)
			var got struct {
				OK        bool   `json:"ok"`
				Code      string `json:"errorCode"`
				Detail    string `json:"errorDetail"`
				Retryable bool   `json:"retryable"`
				Action    string `json:"agentAction"`
				Repair    string `json:"repair"`
			}
			if err := json.Unmarshal([]byte(r.body), &got); err != nil {
				t.Fatalf("%s?%s: %v: %s", bare, tc.query, err, r.body)
			}
			if r.status != 200 || got.OK || got.Code != tc.code || got.Detail != tc.detail ||
				!got.Retryable || got.Action != "fetch_repair" || got.Repair != e.origin()+bare {
				t.Errorf("%s?%s: %d %s", pre, tc.query, r.status, r.body)
			}
			if strings.Contains(r.body, `"bases"`) {
				t.Errorf("%s?%s: the refusal hands out the bases: %s", pre, tc.query, r.body)
			}
		}
		for _, target := range []string{bare, bare + "?", bare + "?&"} {
			if r := e.get(target); r.status != 200 || !strings.Contains(r.body, `"bases"`) {
				t.Errorf("%s: %d %s", target, r.status, r.body)
			}
		}
	}
}
