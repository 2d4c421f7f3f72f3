package geturl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/geturl/control"
	"github.com/hubdev/hub/geturl/session"
)

// restartProcess stops b and starts a new Server on its state dir, as a
// new process would (an upgrade, a reboot, an idle exit): nothing of b's
// memory survives, only its files. moved rewrites one of b's URLs to the
// new data plane's port.
func restartProcess(t *testing.T, b *bridge, between func()) (b2 *bridge, moved func(string) string) {
	t.Helper()
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	if between != nil {
		between()
	}
	cfg := NewConfig()
	cfg.Port, cfg.ControlPort = 0, 0
	dirs := b.Dirs
	s := New(cfg)
	h := adaptertest.Start(t, s, adaptertest.Options{Dirs: &dirs})
	cl, err := Locate(h.Dirs)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := control.ReadFile(h.Dirs)
	if err != nil {
		t.Fatal(err)
	}
	b2 = &bridge{Harness: h, s: s, cl: cl, ckey: cf.Key}
	return b2, func(u string) string {
		return strings.Replace(u, ":"+strconv.Itoa(b.Port())+"/", ":"+strconv.Itoa(h.Port())+"/", 1)
	}
}

// journalFiles lists the geturl state dir's intent journals.
func journalFiles(t *testing.T, b *bridge) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(StateDir(b.Dirs), session.JournalsDirName, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// answerOf decodes a journaled answer without polling it.
func answerOf(t *testing.T, url string) (int, map[string]any, string) {
	t.Helper()
	code, body := get(t, url)
	var v map[string]any
	json.Unmarshal([]byte(body), &v)
	return code, v, body
}

// A restart of the process keeps a session's URLs working, its mutation
// base included: the same mutation URL fetched after the restart answers
// the intent it named with the same result, byte for byte, and runs
// nothing again; an intent the process died in is answered as
// interrupted and never re-run; rotation after the restart kills the old
// URLs and their journal.
func TestMutationURLSurvivesAProcessRestart(t *testing.T) {
	b := startBridge(t, nil)
	root := t.TempDir()
	b.projectPerm(t, root, "p", true, true)
	s := b.newSession(t, "p")
	r1, m1 := initBases(t, s.InitURL)
	write := m1 + "/w?path=a.txt&wait=1500&raw=hello"
	term := m1 + "/x?wait=1500&raw=echo+ran+%3E%3E+runs.txt"
	w1, x1 := getIntent(t, write), getIntent(t, term)
	if w1.State != "succeeded" || x1.State != "succeeded" {
		t.Fatalf("%s\n%s", w1.raw, x1.raw)
	}
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("changed by someone"), 0o644)

	// An intent in the middle of its side effect when the process dies:
	// the journal file as the crash leaves it is the file as it is now.
	crash := m1 + "/x?raw=echo+started+%3E%3E+crash.txt%3B+sleep+30"
	if code, v, body := answerOf(t, crash); code != 200 || v["ok"] != true {
		t.Fatalf("crash intent: %d %s", code, body)
	}
	for i := 0; ; i++ {
		if b, _ := os.ReadFile(filepath.Join(root, "crash.txt")); string(b) == "started\n" {
			break
		}
		if i > 1000 {
			t.Fatal("the command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	files := journalFiles(t, b)
	if len(files) != 1 {
		t.Fatalf("journal files %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("journal file %v %v", fi, err)
	}
	crashImage, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}

	b2, moved := restartProcess(t, b, func() {
		// The graceful stop recorded the command's end; a crash would not have.
		if err := os.WriteFile(files[0], crashImage, 0o600); err != nil {
			t.Fatal(err)
		}
	})
	r2, m2 := initBases(t, moved(s.InitURL))
	if r2 != moved(r1) || m2 != moved(m1) {
		t.Fatalf("bases changed across the restart: %s %s, were %s %s", r2, m2, r1, m1)
	}
	// (a, b) The old mutation URLs answer, from the journal, with the
	// results they had, and run nothing.
	w2, x2 := getIntent(t, moved(write)), getIntent(t, moved(term))
	if !w2.Replayed || w2.Call != w1.Call || w2.State != "succeeded" || string(w2.Result) != string(w1.Result) {
		t.Fatalf("the write after the restart:\n%s\nbefore:\n%s", w2.raw, w1.raw)
	}
	if !x2.Replayed || x2.Call != x1.Call || string(x2.Result) != string(x1.Result) {
		t.Fatalf("the command after the restart:\n%s\nbefore:\n%s", x2.raw, x1.raw)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "changed by someone" {
		t.Fatal("the write ran again after the restart")
	}
	if got, _ := os.ReadFile(filepath.Join(root, "runs.txt")); string(got) != "ran\n" {
		t.Fatalf("the command ran %q", got)
	}
	// The command ran before the restart, and the project may have changed
	// while no hub watched (here it did): its replay offers a repeat.
	var rep struct{ Repeat string }
	json.Unmarshal([]byte(x2.raw), &rep)
	if rep.Repeat == "" {
		t.Fatalf("no repeat offered for a command from before the restart: %s", x2.raw)
	}
	if a := getIntent(t, rep.Repeat); a.State != "succeeded" || a.Replayed {
		t.Fatalf("repeat: %s", a.raw)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "runs.txt")); string(got) != "ran\nran\n" {
		t.Fatalf("after the repeat the command ran %q", got)
	}
	// (c) The intent the process died in is not run again: it failed,
	// outcome unknown, with a retry URL for running it on purpose.
	code, v, body := answerOf(t, moved(crash))
	if code != 200 || v["errorCode"] != "intent_interrupted" || v["retryable"] != true || v["retry"] == nil ||
		!strings.Contains(body, "unknown") {
		t.Fatalf("the interrupted intent: %d %s", code, body)
	}
	time.Sleep(50 * time.Millisecond) // a wrongly started command would have written by now
	if got, _ := os.ReadFile(filepath.Join(root, "crash.txt")); string(got) != "started\n" {
		t.Fatalf("the interrupted command ran again: %q", got)
	}

	// (d) Rotation after the restart kills the old URLs and their journal.
	_, never := get(t, moved(m1)[:strings.Index(moved(m1), "/v0/")]+"/v0/init/ZZZZZZZZ")
	var rot sessionAnswer
	b2.call(t, "POST", "/api/sessions/"+s.ID+"/rotate", nil, &rot)
	for _, old := range []string{moved(s.InitURL), moved(write), moved(r1 + "/r?path=a.txt")} {
		if code, body := get(t, old); code != 404 || body != never {
			t.Fatalf("%s after the rotation: %d %q", old, code, body)
		}
	}
	if after := journalFiles(t, b2); len(after) != 1 || after[0] == files[0] {
		t.Fatalf("journals after the rotation: %v (the old was %s)", after, files[0])
	}
}

// (e) A journal file that was tampered with (here: corrupt) is refused:
// the session keeps its Init URL, but its mutation base is new, so the
// mutation URL from before the restart is an opaque 404 and never runs
// anything against a journal nobody can vouch for.
func TestTamperedJournalRetiresTheMutationURL(t *testing.T) {
	b := startBridge(t, nil)
	root := t.TempDir()
	b.projectPerm(t, root, "p", true, false)
	s := b.newSession(t, "p")
	_, m1 := initBases(t, s.InitURL)
	write := m1 + "/w?path=a.txt&wait=1500&raw=hello"
	if w := getIntent(t, write); w.State != "succeeded" {
		t.Fatal(w.raw)
	}
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("changed by someone"), 0o644)
	files := journalFiles(t, b)
	if len(files) != 1 {
		t.Fatalf("journal files %v", files)
	}
	b2, moved := restartProcess(t, b, func() {
		// Drop the record of the write: replayed, the URL would write again.
		os.WriteFile(files[0], []byte(`{"k":"hdr","v":1,"session":"`+s.ID+`","gen":"0000000000000000"}`+"\n"), 0o600)
	})
	_ = b2
	if code, body := get(t, moved(s.InitURL)); code != 200 {
		t.Fatalf("the Init URL after the restart: %d %s", code, body)
	}
	_, m2 := initBases(t, moved(s.InitURL))
	if m2 == moved(m1) || m2 == "" {
		t.Fatalf("mutation base %q after the restart, was %q: it must be new", m2, m1)
	}
	if code, _ := get(t, moved(write)); code != 404 {
		t.Fatalf("the old mutation URL answered %d, want an opaque 404", code)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "changed by someone" {
		t.Fatal("the write ran again after the restart")
	}
}
