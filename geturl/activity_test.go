package geturl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/transport"
)

// The operator's activity list shows, on the request that made it, which
// files each successful mutation changed: for /w /e /a through a real
// bridge, whether the intent finished within the request or after it, and
// never on a replay, a poll or a refusal.
func TestActivityShowsChangedPaths(t *testing.T) {
	b := startBridge(t, nil)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644)
	b.projectPerm(t, root, "p", true, false)
	_, m := initBases(t, b.newSession(t, "p").InitURL)
	var files strings.Builder
	for i := range 11 {
		fmt.Fprintf(&files, "*** Add File: gen/f%02d.txt\n+%d\n", i, i)
	}
	enc := transport.Encode
	w := getIntent(t, m+"/w?path=src/new.txt&wait=1500&raw=new")
	e := getIntent(t, m+"/e?path=a.txt&old=a&new=A&wait=1500")
	a := getIntent(t, m+"/a?wait=1500&raw="+enc("*** Begin Patch\n"+files.String()+"*** End Patch\n"))
	late := getIntent(t, m+"/w?path=late.txt&raw=x") // wait=0: the request may answer before the write ends
	replay := getIntent(t, m+"/w?path=src/new.txt&wait=1500&raw=new")
	get(t, m+"/w?path=.git/config&wait=1500&raw=x")
	for _, x := range []intentAnswer{w, e, a, late} {
		if x.State != "succeeded" {
			t.Fatalf("%s", x.raw)
		}
	}
	if !replay.Replayed {
		t.Fatalf("%s", replay.raw)
	}

	want := map[string]string{
		w.Call:    "src/new.txt",
		e.Call:    "a.txt",
		a.Call:    "gen/f00.txt gen/f01.txt gen/f02.txt gen/f03.txt gen/f04.txt gen/f05.txt gen/f06.txt gen/f07.txt +3",
		late.Call: "late.txt",
	}
	seen := map[string]int{}
	for _, en := range b.s.activity.Recent() {
		if len(en.Paths) == 0 {
			if en.Route == "/w" && en.ErrorCode == "" && !en.Replayed && en.Call != "" {
				t.Errorf("no paths on %+v", en)
			}
			continue
		}
		if en.Replayed || en.Route == "/j" || en.ErrorCode != "" {
			t.Errorf("paths on %+v", en)
		}
		got := strings.Join(en.Paths, " ")
		if en.MorePaths > 0 {
			got += fmt.Sprintf(" +%d", en.MorePaths)
		}
		if got != want[en.Call] {
			t.Errorf("%s: paths %q, want %q", en.Route, got, want[en.Call])
		}
		seen[en.Call]++
	}
	for call := range want {
		if seen[call] != 1 {
			t.Errorf("call %s shown with paths %d times", call, seen[call])
		}
	}
}
