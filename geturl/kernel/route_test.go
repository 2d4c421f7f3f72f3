package kernel

import (
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// TestRouteTable keeps the table honest: one entry per route, each served
// route's spec names its own route, and the spec's base split holds.
func TestRouteTable(t *testing.T) {
	k := New(Options{})
	seen := map[string]bool{}
	for _, r := range k.Routes() {
		if seen[r.Path] {
			t.Fatalf("%s declared twice", r.Path)
		}
		seen[r.Path] = true
		if r.Served() && (r.Spec == nil || r.Spec.Route != r.Path) {
			t.Fatalf("%s: spec route %v", r.Path, r.Spec)
		}
		if r.Init != "" && !strings.HasPrefix(r.Init, r.Path) {
			t.Fatalf("%s: init suffix %q", r.Path, r.Init)
		}
		got, ok := k.Route(r.Path)
		if !ok || got != r {
			t.Fatalf("lookup %s", r.Path)
		}
	}
	for _, p := range []string{"/w", "/e", "/a", "/x", "/s", "/b", "/j"} {
		r, ok := k.Route(p)
		if !ok || r.Base != route.MutationBase || r.Served() {
			t.Fatalf("%s: mutation route must be declared, unserved, on the mutation base", p)
		}
	}
	for _, p := range []string{"/k", "/z"} {
		if r, _ := k.Route(p); r.Base != route.AnyBase || !r.Served() {
			t.Fatalf("%s must be served on both bases", p)
		}
	}
	if _, ok := k.Route("/nope"); ok {
		t.Fatal("undeclared route found")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Handle of an undeclared route must panic")
		}
	}()
	k.Handle("/nope", &transport.Spec{Route: "/nope"}, nil)
}

func TestUnknownRouteListsWhatTheBaseServes(t *testing.T) {
	k := New(Options{})
	e := k.UnknownRoute("/q", route.ReadBase)
	if e.Code != transport.CodeUnknownRoute || !strings.Contains(e.Hint, "/r") || strings.Contains(e.Hint, "/w") {
		t.Fatalf("%+v", e)
	}
	e = k.UnknownRoute("/q", route.MutationBase)
	if strings.Contains(e.Hint, "/r ") || !strings.Contains(e.Hint, "/k") {
		t.Fatalf("%+v", e)
	}
}

// What /z?last=1 recovers is replaced by answers of real routes only: not
// by HEAD, /z itself, or a route that does not exist (a mistyped /Z).
func TestStoresAnswer(t *testing.T) {
	p := newProject(t, nil)
	k := New(Options{})
	rt := func(path string) *route.Entry { r, _ := k.Route(path); return r }
	for _, c := range []struct {
		call route.Call
		want bool
	}{
		{route.Call{Session: p.s, Route: rt("/r")}, true},
		{route.Call{Session: p.s, Route: rt("/r"), Head: true}, false},
		{route.Call{Session: p.s, Route: rt("/z")}, false},
		{route.Call{Session: p.s}, false}, // no such route
	} {
		if got := c.call.StoresAnswer(); got != c.want {
			t.Errorf("%+v: StoresAnswer %v", c.call.Route, got)
		}
	}
}
