package session

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/route"
)

// A restart (a new Manager on the same state dir) keeps each live
// session's Init and read URLs working; its mutation token is new, so a
// mutation URL from before the restart is a 404, never a second run of
// an intent the old journal had. Rotation and stop stay explicit.
func TestTokensSurviveARestart(t *testing.T) {
	m, path := open(t)
	mustProject(t, m, t.TempDir(), "p", true, false)
	s1, s2 := mustSession(t, m, "p"), mustSession(t, m, "p")
	g1, _ := m.Live(s1.ID)
	before := map[route.Capability]string{}
	for _, c := range []route.Capability{route.CapInit, route.CapRead, route.CapMutation} {
		before[c] = g1.Token(c)
	}
	fi, err := os.Stat(tokensPath(path))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file: %v, mode %v; want 0600", err, fi.Mode())
	}
	if _, err := m.Stop(s2.ID); err != nil {
		t.Fatal(err)
	}

	re, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	g, ok := re.Live(s1.ID)
	if !ok {
		t.Fatal("session not live after the restart")
	}
	for _, c := range []route.Capability{route.CapInit, route.CapRead} {
		if g.Token(c) != before[c] {
			t.Errorf("%v token changed across the restart", c)
		}
		if _, _, ok := re.Sessions().Lookup(before[c]); !ok {
			t.Errorf("the %v URL from before the restart is not found", c)
		}
	}
	if g.Token(route.CapMutation) == before[route.CapMutation] {
		t.Error("the mutation token was kept: an intent run before the restart could run again")
	}
	if _, _, ok := re.Sessions().Lookup(before[route.CapMutation]); ok {
		t.Error("the old mutation URL still resolves after the restart")
	}
	if _, ok := re.Live(s2.ID); ok {
		t.Error("a stopped session came back to life")
	}
	if v, _ := re.Session(s1.ID); v.InitToken != before[route.CapInit] {
		t.Error("the control page would show another Init URL than the one the agent holds")
	}

	// Rotation is explicit and is kept too: the old URL dies for good.
	if _, err := re.Rotate(s1.ID); err != nil {
		t.Fatal(err)
	}
	rotated, _ := re.Live(s1.ID)
	again, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	g, _ = again.Live(s1.ID)
	if g.Token(route.CapInit) != rotated.Token(route.CapInit) || g.Token(route.CapInit) == before[route.CapInit] {
		t.Error("a rotated session came back with its old Init token, or not with its new one")
	}
}

// A tokens file another user could have changed (group- or
// world-writable here) is not trusted: every session gets new tokens,
// and the file is rewritten safely.
func TestUnsafeTokensFileIsNotTrusted(t *testing.T) {
	m, path := open(t)
	mustProject(t, m, t.TempDir(), "p", false, false)
	s := mustSession(t, m, "p")
	old := s.InitToken
	tp := tokensPath(path)
	if err := os.Chmod(tp, 0o666); err != nil {
		t.Fatal(err)
	}
	re, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := re.Session(s.ID); v.InitToken == old || v.InitToken == "" {
		t.Fatalf("Init token from a 0666 file reused (%q)", v.InitToken)
	}
	if fi, err := os.Stat(tp); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file after the restart: %v %v", err, fi.Mode())
	}
}

// While any session is live the manager holds the hub's idle rules off;
// the hold ends with the last live session and is taken again with the
// next.
func TestHoldWhileLive(t *testing.T) {
	m, _ := open(t)
	mustProject(t, m, t.TempDir(), "p", false, false)
	held := make(chan bool, 10)
	hold := func() func() {
		held <- true
		return func() { held <- false }
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.HoldWhileLive(ctx, hold) }()
	expect := func(want bool, what string) {
		t.Helper()
		select {
		case got := <-held:
			if got != want {
				t.Fatalf("%s: hold %v, want %v", what, got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no hold change", what)
		}
	}
	s := mustSession(t, m, "p")
	expect(true, "a session started")
	if _, err := m.Rotate(s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stop(s.ID); err != nil {
		t.Fatal(err)
	}
	// Rotation may release and take the hold again in between; after the
	// stop the last word is a release.
	last := true
	for last {
		select {
		case last = <-held:
		case <-time.After(10 * time.Second):
			t.Fatal("the hold outlived the last live session")
		}
	}
	if _, err := m.Start(s.ID); err != nil {
		t.Fatal(err)
	}
	expect(true, "a session started again")
	cancel()
	<-done
	expect(false, "the run ended")
}

// Adding a registered root again without a name is refused, naming the
// project it is and how to change it, instead of a silent "-2" duplicate
// with other permissions; a named second view is still allowed.
func TestAddRegisteredRootWithoutName(t *testing.T) {
	m, _ := open(t)
	root := t.TempDir()
	first := mustProject(t, m, root, "", false, false)
	_, err := m.AddProject(root, "", route.Permissions{Write: true})
	if code(err) != CodeProjectExists || !strings.Contains(err.Error(), "already registered as project "+first.Name) ||
		!strings.Contains(err.Error(), "hub geturl project set "+first.Name) {
		t.Fatalf("AddProject(same root, no name) = %v", err)
	}
	if len(m.Projects()) != 1 {
		t.Fatalf("projects %+v", m.Projects())
	}
	if _, err := m.AddProject(root, "rw-view", route.Permissions{Write: true}); err != nil {
		t.Fatalf("a named second view of the root: %v", err)
	}
}
