package session

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/engine/intents"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
)

// A restart (a new Manager on the same state dir) keeps each live
// session's Init, read and mutation URLs working, the mutation token
// together with its generation's journal; rotation and stop stay
// explicit, and end the generation's journal file with its URLs.
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
	j1 := journalFileOf(t, path, g1)
	if fi, err := os.Stat(j1); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("journal file: %v %v; want 0600", err, fi)
	}
	g2, _ := m.Live(s2.ID)
	j2 := journalFileOf(t, path, g2)
	if _, err := m.Stop(s2.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(j2); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a stopped session's journal is still there: %v", err)
	}

	re, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	g, ok := re.Live(s1.ID)
	if !ok {
		t.Fatal("session not live after the restart")
	}
	for c, tok := range before {
		if g.Token(c) != tok {
			t.Errorf("%v token changed across the restart", c)
		}
		if _, _, ok := re.Sessions().Lookup(tok); !ok {
			t.Errorf("the %v URL from before the restart is not found", c)
		}
	}
	if !g.Mutations().Journal.Durable() {
		t.Error("the restored journal is not durable")
	}
	if _, ok := re.Live(s2.ID); ok {
		t.Error("a stopped session came back to life")
	}
	if v, _ := re.Session(s1.ID); v.InitToken != before[route.CapInit] {
		t.Error("the control page would show another Init URL than the one the agent holds")
	}

	// Rotation is explicit and is kept too: the old URLs die for good,
	// and the old generation's journal goes with them.
	if _, err := re.Rotate(s1.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(j1); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the rotated generation's journal is still there: %v", err)
	}
	rotated, _ := re.Live(s1.ID)
	again, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	g, _ = again.Live(s1.ID)
	for _, c := range []route.Capability{route.CapInit, route.CapMutation} {
		if g.Token(c) != rotated.Token(c) || g.Token(c) == before[c] {
			t.Errorf("a rotated session came back with its old %v token, or not with its new one", c)
		}
		if _, _, ok := again.Sessions().Lookup(before[c]); ok {
			t.Errorf("the %v URL from before the rotation resolves after a restart", c)
		}
	}
	if err := again.Delete(s1.ID); err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir(journalsDir(path)); len(files) != 0 {
		t.Fatalf("journals left after every session ended: %v", files)
	}
}

func journalFileOf(t *testing.T, registry string, g *Generation) string {
	t.Helper()
	if g.journalID == "" {
		t.Fatal("the generation has no durable journal")
	}
	return journalPath(journalsDir(registry), g.id, g.journalID)
}

// An intent that ran before a restart is answered from the restored
// journal after it, and not run again.
func TestJournalSurvivesARestart(t *testing.T) {
	m, path := open(t)
	mustProject(t, m, t.TempDir(), "p", true, false)
	s := mustSession(t, m, "p")
	g, _ := m.Live(s.ID)
	var runs atomic.Int32
	in := intents.Intent{Tool: "write", Args: map[string]any{"path": "/project/a", "content": "x"},
		Exec: func(context.Context, *intents.Run) (any, *fault.Error) {
			runs.Add(1)
			return map[string]int{"bytes": 1}, nil
		}}
	rec, start, err := g.Mutations().Journal.Begin(in)
	if err != nil {
		t.Fatal(err)
	}
	start(context.Background())

	re, oerr := Open(Options{Path: path})
	if oerr != nil {
		t.Fatal(oerr)
	}
	g2, _ := re.Live(s.ID)
	got, s2, err := g2.Mutations().Journal.Begin(in)
	if err != nil || s2 != nil || got.Call != rec.Call || got.State != intents.Succeeded || string(got.Result) != `{"bytes":1}` {
		t.Fatalf("after the restart: %+v %v (would run again: %v)", got, err, s2 != nil)
	}
	if runs.Load() != 1 {
		t.Fatalf("ran %d times", runs.Load())
	}
}

// A journal file that is corrupt, missing, planted (a symbolic link) or
// not private is never trusted: the session keeps its Init and read URLs
// but gets a new mutation base, so no old mutation URL can execute
// anything against a journal that may not know what already ran; the
// refusal is logged, and nothing crashes.
func TestRefusedJournalRetiresTheMutationBase(t *testing.T) {
	for _, tc := range []struct {
		name, logged string
		spoil        func(t *testing.T, path string)
	}{
		{"corrupt", "is corrupt", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, append(b, "{\"k\":\"run\",\"call\":\"x\"}\n"...), 0o600)
		}},
		{"missing", "is missing", func(t *testing.T, path string) { os.Remove(path) }},
		{"symlink", "is not private", func(t *testing.T, path string) {
			planted := filepath.Join(t.TempDir(), "planted")
			b, _ := os.ReadFile(path)
			os.WriteFile(planted, b, 0o600)
			os.Remove(path)
			os.Symlink(planted, path)
		}},
		{"mode 0666", "is not private", func(t *testing.T, path string) { os.Chmod(path, 0o666) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, path := open(t)
			mustProject(t, m, t.TempDir(), "p", true, true)
			s := mustSession(t, m, "p")
			g, _ := m.Live(s.ID)
			oldMut, oldInit := g.Token(route.CapMutation), g.Token(route.CapInit)
			tc.spoil(t, journalFileOf(t, path, g))

			var logs strings.Builder
			re, err := Open(Options{Path: path, Log: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			g2, ok := re.Live(s.ID)
			if !ok || g2.Token(route.CapInit) != oldInit {
				t.Fatal("the Init URL did not survive")
			}
			if g2.Token(route.CapMutation) == oldMut || g2.Token(route.CapMutation) == "" {
				t.Fatal("the mutation token of an untrusted journal was kept")
			}
			if _, _, ok := re.Sessions().Lookup(oldMut); ok {
				t.Fatal("the old mutation URL still resolves")
			}
			if !strings.Contains(logs.String(), tc.logged) || !strings.Contains(logs.String(), "new mutation base") {
				t.Fatalf("log: %s", logs.String())
			}
			if strings.Contains(logs.String(), oldMut) {
				t.Fatal("a token reached the log")
			}
			if !g2.Mutations().Journal.Durable() {
				t.Fatal("the new generation's journal is not durable")
			}
			// The refused file is gone; the new one is private.
			files, _ := os.ReadDir(journalsDir(path))
			if len(files) != 1 || files[0].Name() != filepath.Base(journalFileOf(t, path, g2)) {
				t.Fatalf("journals: %v", files)
			}
		})
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
