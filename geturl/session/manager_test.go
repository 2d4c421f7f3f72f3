package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/route"
)

func open(t *testing.T, seed ...Project) (*Manager, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", "geturl", "registry.json")
	m, err := Open(Options{Path: path, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return m, path
}

func code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func mustProject(t *testing.T, m *Manager, dir, name string, write, terminal bool) ProjectView {
	t.Helper()
	p, err := m.AddProject(dir, name, route.Permissions{Write: write, Terminal: terminal})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustSession(t *testing.T, m *Manager, project string) SessionView {
	t.Helper()
	s, err := m.NewSession(project, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTokens(t *testing.T) {
	seen := map[string]bool{}
	counts := map[byte]int{}
	for range 20000 {
		tok := newToken()
		if len(tok) != TokenLen {
			t.Fatalf("token %q has length %d", tok, len(tok))
		}
		for i := 0; i < len(tok); i++ {
			if !strings.ContainsRune(base62, rune(tok[i])) {
				t.Fatalf("token %q is not base62", tok)
			}
			counts[tok[i]]++
		}
		if seen[tok] {
			t.Fatalf("token %q repeated", tok)
		}
		seen[tok] = true
	}
	// 160000 characters over 62 symbols: about 2581 each. A modulo bias
	// would give the first eight symbols about 1.3x the others.
	for c, n := range counts {
		if n < 2200 || n > 2960 {
			t.Errorf("symbol %q drawn %d times; want about 2581", c, n)
		}
	}
}

func TestProjectsAndPersistence(t *testing.T) {
	m, path := open(t)
	root := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(root, link)
	p := mustProject(t, m, link, "", false, false)
	real, _ := filepath.EvalSymlinks(root)
	if p.Root != real || p.Name != filepath.Base(root) {
		t.Fatalf("project %+v: want root %s (the realpath) and the base name", p, real)
	}
	// Two names may share one root.
	mustProject(t, m, root, "rw", true, true)
	if _, err := m.AddProject(root, "rw", route.Permissions{}); code(err) != CodeProjectExists {
		t.Fatalf("duplicate name: %v", err)
	}
	file := filepath.Join(root, "f")
	os.WriteFile(file, nil, 0o600)
	for _, dir := range []string{file, filepath.Join(root, "missing")} {
		if _, err := m.AddProject(dir, "x", route.Permissions{}); code(err) != CodeInvalidProject {
			t.Fatalf("AddProject(%s) = %v, want %s", dir, err, CodeInvalidProject)
		}
	}
	if _, err := m.AddProject(root, "../evil", route.Permissions{}); code(err) != CodeInvalidName {
		t.Fatalf("bad name: %v", err)
	}
	s := mustSession(t, m, "rw")
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("registry mode %v", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Fatalf("registry dir mode %v", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	g, _ := m.Live(s.ID)
	for _, k := range []route.Capability{route.CapInit, route.CapRead, route.CapMutation} {
		if tok := g.Token(k); tok == "" || strings.Contains(string(b), tok) {
			t.Fatalf("%v token %q missing or persisted", k, tok)
		}
	}
	if err := m.RemoveProject("rw"); code(err) != CodeProjectInUse {
		t.Fatalf("removing a project in use: %v", err)
	}

	// A new process reads the same registry; it keeps the tokens with the
	// journal (TestTokensSurviveARestart).
	m2, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if len(m2.Projects()) != 2 || len(m2.List()) != 1 || !m2.List()[0].Live {
		t.Fatalf("reloaded: %+v %+v", m2.Projects(), m2.List())
	}
	g2, _ := m2.Live(s.ID)
	if g2.Token(route.CapMutation) != g.Token(route.CapMutation) {
		t.Fatal("a new process did not keep the mutation token with its journal")
	}
	if err := m2.Delete(s.ID); err != nil {
		t.Fatal(err)
	}
	if err := m2.RemoveProject("rw"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := m2.Sessions().Lookup(g2.Token(route.CapRead)); ok {
		t.Fatal("a deleted session's token still resolves")
	}
}

func TestCorruptRegistryIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.json")
	os.WriteFile(path, []byte("{not json"), 0o600)
	if _, err := Open(Options{Path: path}); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open(corrupt) = %v, want an error naming the file", err)
	}
}

func TestLimits(t *testing.T) {
	m, _ := open(t)
	mustProject(t, m, t.TempDir(), "p", false, false)
	var ids []string
	for range MaxEnabled {
		ids = append(ids, mustSession(t, m, "p").ID)
	}
	if _, err := m.NewSession("p", ""); code(err) != CodeEnabledLimit {
		t.Fatalf("17th enabled session: %v", err)
	}
	if _, err := m.NewSession("nope", ""); code(err) != CodeProjectNotFound {
		t.Fatalf("unknown project: %v", err)
	}
	// Stopped definitions still count towards 64.
	for len(ids) < MaxDefinitions {
		if _, err := m.Stop(ids[len(ids)-1]); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, mustSession(t, m, "p").ID)
	}
	if _, err := m.Stop(ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := m.NewSession("p", ""); code(err) != CodeDefinitionLimit {
		t.Fatalf("65th definition: %v", err)
	}
	if n := m.EnabledCount(); n != MaxEnabled-1 {
		t.Fatalf("enabled = %d, want %d", n, MaxEnabled-1)
	}
	// Starting past 16 enabled is refused too.
	for _, id := range ids[1:MaxEnabled] {
		if _, err := m.Start(id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Start(ids[MaxEnabled]); code(err) != CodeEnabledLimit {
		t.Fatalf("17th start: %v", err)
	}
}

func liveTokens(t *testing.T, m *Manager, id string) map[route.Capability]string {
	t.Helper()
	g, ok := m.Live(id)
	if !ok {
		t.Fatalf("session %s is not live", id)
	}
	out := map[route.Capability]string{}
	for _, k := range []route.Capability{route.CapInit, route.CapRead, route.CapMutation} {
		out[k] = g.Token(k)
	}
	return out
}

func resolves(m *Manager, tok string) bool {
	_, _, ok := m.Sessions().Lookup(tok)
	return tok != "" && ok
}

// Rotating, stopping or deleting one session never touches another;
// changing a project rotates only its sessions.
func TestRotationIsolation(t *testing.T) {
	m, _ := open(t)
	root := t.TempDir()
	mustProject(t, m, root, "ro", false, false)
	mustProject(t, m, root, "rw", true, false)
	a, b := mustSession(t, m, "ro"), mustSession(t, m, "ro")
	c := mustSession(t, m, "rw")
	ta, tb, tc := liveTokens(t, m, a.ID), liveTokens(t, m, b.ID), liveTokens(t, m, c.ID)
	if ta[route.CapMutation] != "" || tc[route.CapMutation] == "" {
		t.Fatalf("a read-only session has a mutation token, or a writable one lacks it: %v %v", ta, tc)
	}
	if _, err := m.Rotate(a.ID); err != nil {
		t.Fatal(err)
	}
	if resolves(m, ta[route.CapInit]) || resolves(m, ta[route.CapRead]) {
		t.Fatal("rotated session's old tokens still resolve")
	}
	if !resolves(m, tb[route.CapRead]) || !resolves(m, tc[route.CapRead]) {
		t.Fatal("rotating a touched other sessions")
	}
	ta = liveTokens(t, m, a.ID)

	terminal := true
	if _, err := m.SetProject("rw", ProjectChange{Terminal: &terminal}); err != nil {
		t.Fatal(err)
	}
	if resolves(m, tc[route.CapRead]) || resolves(m, tc[route.CapMutation]) {
		t.Fatal("changing rw did not rotate its session")
	}
	if !resolves(m, ta[route.CapRead]) || !resolves(m, tb[route.CapRead]) {
		t.Fatal("changing rw rotated sessions of another project")
	}
	if g, _ := m.Live(c.ID); !g.Permissions().Terminal {
		t.Fatal("the new generation lacks the new permission")
	}

	if _, err := m.Stop(b.ID); err != nil {
		t.Fatal(err)
	}
	if resolves(m, tb[route.CapRead]) || !resolves(m, ta[route.CapRead]) {
		t.Fatal("stop ended the wrong session")
	}
	v, err := m.Start(b.ID)
	if err != nil || !v.Live || v.InitToken == "" || v.InitToken == tb[route.CapInit] {
		t.Fatalf("start: %+v %v", v, err)
	}
	if _, err := m.Rotate("s000000"); code(err) != CodeSessionNotFound {
		t.Fatalf("rotate unknown: %v", err)
	}
}

// Config projects are registered at Open and win over the registry there.
func TestSeedProjects(t *testing.T) {
	root := t.TempDir()
	m, path := open(t, Project{Name: "cfg", Root: root, Write: true})
	if ps := m.Projects(); len(ps) != 1 || !ps[0].Write {
		t.Fatalf("seeded: %+v", ps)
	}
	w := false
	m.SetProject("cfg", ProjectChange{Write: &w})
	m2, err := Open(Options{Path: path, Seed: []Project{{Name: "cfg", Root: root, Write: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if ps := m2.Projects(); !ps[0].Write {
		t.Fatal("the config did not win at the next start")
	}
	if _, err := Open(Options{Path: path, Seed: []Project{{Name: "gone", Root: filepath.Join(root, "missing")}}}); err == nil {
		t.Fatal("a seed project with a missing root was accepted")
	}
}

// A project whose root disappears keeps its sessions defined, not live.
func TestRootUnavailable(t *testing.T) {
	m, path := open(t)
	root := filepath.Join(t.TempDir(), "proj")
	os.Mkdir(root, 0o700)
	mustProject(t, m, root, "p", false, false)
	s := mustSession(t, m, "p")
	os.Remove(root)
	m2, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := m2.Session(s.ID)
	if v.Live || !v.Enabled || v.Note == "" {
		t.Fatalf("session of a missing root: %+v", v)
	}
}

// The bridges opt-in holds only with write: adding or setting it on a
// project without write is refused with the reason, revoking write
// revokes it, and a registry (or config) claiming it without write grants
// none. A change of it rotates the project's sessions; a generation
// carries it in its permissions, and it persists.
func TestBridgesNeedWrite(t *testing.T) {
	m, path := open(t)
	root := t.TempDir()
	for _, perm := range []route.Permissions{{Bridges: true}, {Terminal: true, Bridges: true}} {
		_, err := m.AddProject(root, "p", perm)
		if code(err) != CodeBridgesNeedWrite || !strings.Contains(err.Error(), "a page's tool can do anything the page can") {
			t.Fatalf("%+v: %v", perm, err)
		}
	}
	if len(m.Projects()) != 0 {
		t.Fatal("a refused project was added")
	}
	if v := mustProject(t, m, root, "ro", false, false); v.Bridges {
		t.Fatalf("bridges on by default: %+v", v)
	}
	yes, no := true, false
	if _, err := m.SetProject("ro", ProjectChange{Bridges: &yes}); code(err) != CodeBridgesNeedWrite {
		t.Fatalf("set bridges on a read-only project: %v", err)
	}
	if _, err := m.SetProject("ro", ProjectChange{Terminal: &yes, Bridges: &yes}); code(err) != CodeBridgesNeedWrite {
		t.Fatalf("set bridges with terminal only: %v", err)
	}
	v, err := m.SetProject("ro", ProjectChange{Write: &yes, Bridges: &yes})
	if err != nil || !v.Bridges || !v.Write {
		t.Fatalf("write and bridges together: %+v %v", v, err)
	}
	s := mustSession(t, m, "ro")
	if g, _ := m.Live(s.ID); g.Permissions() != (route.Permissions{Write: true, Bridges: true}) || !s.Bridges {
		t.Fatalf("generation %+v, view %+v", g.Permissions(), s)
	}
	old := liveTokens(t, m, s.ID)
	// Revoking write takes the bridges with it (and rotates the session).
	if v, err := m.SetProject("ro", ProjectChange{Write: &no}); err != nil || v.Write || v.Bridges {
		t.Fatalf("revoking write: %+v %v", v, err)
	}
	if resolves(m, old[route.CapRead]) {
		t.Fatal("the change did not rotate the session")
	}
	if g, _ := m.Live(s.ID); g.Permissions().Bridges {
		t.Fatal("bridges survived write")
	}
	if _, err := m.SetProject("ro", ProjectChange{Write: &no, Bridges: &yes}); code(err) != CodeBridgesNeedWrite {
		t.Fatalf("bridges while revoking write: %v", err)
	}
	mustProject(t, m, root, "rwb", true, false)
	if _, err := m.SetProject("rwb", ProjectChange{Bridges: &yes}); err != nil {
		t.Fatal(err)
	}
	m2, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m2.Projects() {
		if p.Bridges != (p.Name == "rwb") {
			t.Fatalf("reloaded: %+v", p)
		}
	}
	// A config seed cannot claim it without write; a registry edited to
	// claim it grants none.
	if _, err := Open(Options{Path: path, Seed: []Project{{Name: "cfg", Root: root, Bridges: true}}}); code(err) != CodeBridgesNeedWrite {
		t.Fatalf("seed: %v", err)
	}
	b, _ := os.ReadFile(path)
	edited := strings.Replace(string(b), `"name": "ro",`, `"name": "ro", "bridges": true,`, 1)
	if edited == string(b) {
		t.Fatalf("no project ro in %s", b)
	}
	os.WriteFile(path, []byte(edited), 0o600)
	m3, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := m3.Live(s.ID); g == nil || g.Permissions().Bridges {
		t.Fatalf("an edited registry granted bridges without write: %+v", g)
	}
	if v, _ := m3.Session(s.ID); v.Bridges {
		t.Fatalf("view: %+v", v)
	}
}
