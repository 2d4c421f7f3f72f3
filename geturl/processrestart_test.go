package geturl

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// A restart of the process (a new Server on the same state dir: an
// upgrade, a reboot, an idle exit) keeps the session's Init URL working.
// Its mutation base is new: the mutation URL from before the restart is
// an opaque 404 and the write it carried never runs again, while the
// same write through the new base is a new intent.
func TestInitURLSurvivesAProcessRestart(t *testing.T) {
	b := startBridge(t, nil)
	root := t.TempDir()
	b.projectPerm(t, root, "p", true, false)
	s := b.newSession(t, "p")
	r1, m1 := initBases(t, s.InitURL)
	write := m1 + "/w?path=a.txt&wait=1500&raw=hello"
	if w := getIntent(t, write); w.State != "succeeded" {
		t.Fatal(w.raw)
	}
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("changed by someone"), 0o644)
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}

	cfg := NewConfig()
	cfg.Port, cfg.ControlPort = 0, 0
	dirs := b.Dirs
	h2 := adaptertest.Start(t, New(cfg), adaptertest.Options{Dirs: &dirs})
	moved := func(u string) string {
		return strings.Replace(u, ":"+strconv.Itoa(b.Port())+"/", ":"+strconv.Itoa(h2.Port())+"/", 1)
	}
	if code, body := get(t, moved(s.InitURL)); code != 200 {
		t.Fatalf("the Init URL after a process restart: %d %s", code, body)
	}
	r2, m2 := initBases(t, moved(s.InitURL))
	if r2 != moved(r1) {
		t.Errorf("read base changed across the restart: %s, was %s", r2, r1)
	}
	if m2 == moved(m1) || m2 == "" {
		t.Fatalf("mutation base %q after the restart, was %q: it must be new", m2, m1)
	}
	if code, _ := get(t, moved(write)); code != 404 {
		t.Fatalf("the old mutation URL after the restart answered %d, want an opaque 404", code)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "changed by someone" {
		t.Fatal("the write ran again after the restart")
	}
}
