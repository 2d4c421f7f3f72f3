package geturl

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hubdev/hub/adapters/adaptertest"
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
	for _, en := range b.s.activity.recent() {
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

// The list's bounds and the join of a change with its request, either
// order; a change whose request never shows is forgotten in bounded time.
func TestActivityLogChangedPaths(t *testing.T) {
	l := newActivityLog()
	many := make([]string, 20)
	for i := range many {
		many[i] = fmt.Sprintf("d/f%d", i)
	}
	// Change first, then the request's entry.
	l.changed("s1", "c1", many)
	l.add(activityEntry{Session: "s1", Route: "/a", Call: "c1"})
	// Entry first (answered pending), then the change; a poll and a replay
	// of the same call stay without paths.
	l.add(activityEntry{Session: "s1", Route: "/w", Call: "c2"})
	l.add(activityEntry{Session: "s1", Route: "/j", Call: "c2"})
	l.add(activityEntry{Session: "s1", Route: "/w", Call: "c2", Replayed: true})
	l.changed("s1", "c2", []string{"x.txt"})
	// Another session's identical call id is another intent.
	l.add(activityEntry{Session: "s2", Route: "/w", Call: "c2"})

	got := map[string]string{}
	for _, e := range l.recent() {
		got[e.Session+" "+e.Route+" "+e.Call+fmt.Sprint(e.Replayed)] = strings.Join(e.Paths, ",") + fmt.Sprint("+", e.MorePaths)
	}
	for k, v := range map[string]string{
		"s1 /a c1false": "d/f0,d/f1,d/f2,d/f3,d/f4,d/f5,d/f6,d/f7+12",
		"s1 /w c2false": "x.txt+0",
		"s1 /j c2false": "+0",
		"s1 /w c2true":  "+0",
		"s2 /w c2false": "+0",
	} {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	for i := range 3 * maxActivity {
		l.changed("s3", fmt.Sprint("orphan", i), []string{"o"})
	}
	if len(l.pending) > maxActivity || len(l.order) > maxActivity {
		t.Fatalf("%d pending changes kept", len(l.pending))
	}
}

// A path is the agent's choice: the operator sees it as inert, visible
// text, bounded.
func TestDisplayPath(t *testing.T) {
	for in, want := range map[string]string{
		"src/main.go":                  "src/main.go",
		"docs/read me.md":              "docs/read me.md",
		"évian/ß.txt":                  "évian/ß.txt",
		"a\nb":                         `a\u000ab`,
		"evil\u202etxt.exe":            `evil\u202etxt.exe`,
		"zero\u200bwidth":              `zero\u200bwidth`,
		"nb\u00a0sp":                   `nb\u00a0sp`,
		`back\slash`:                   `back\\slash`,
		"bad\xffbyte":                  `bad\xffbyte`,
		"<img src=x onerror=alert(1)>": "<img src=x onerror=alert(1)>",
	} {
		if got := displayPath(in); got != want {
			t.Errorf("displayPath(%q) = %q, want %q", in, got, want)
		}
	}
	long := displayPath(strings.Repeat("ab/", 200))
	if len(long) > maxPathDisplay+len("…")+3 || !strings.HasSuffix(long, "…") {
		t.Errorf("long path shown as %d bytes: %q", len(long), long)
	}
}

// The page renders the changed paths under the tool, as text: a path
// that looks like markup stays text, and the count of the rest shows.
func TestActivityChangedPathsInChromium(t *testing.T) {
	adaptertest.RequireChromium(t)
	l := newActivityLog()
	l.changed("s1", "c1", []string{"src/a.go", "<img src=x onerror=window.pwned=1>", "c", "d", "e", "f", "g", "h", "i", "j"})
	l.add(activityEntry{At: time.Now(), Session: "s1", Route: "/a", Tool: "apply_patch", Status: 200, Call: "c1"})
	l.add(activityEntry{At: time.Now(), Session: "s1", Route: "/r", Tool: "read", Status: 200})
	state, err := json.Marshal(l.recent())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ui/app.js" {
			js, _ := uiFiles.ReadFile("ui/app.js")
			w.Header().Set("Content-Type", "text/javascript")
			w.Write(js)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><body data-logged-in="no"><table id="activity"><tbody></tbody></table>` +
			`<script src="/ui/app.js"></script></body>`))
	}))
	defer srv.Close()
	ctx, cancel := adaptertest.Chromium(t, context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 30*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL), chromedp.WaitVisible(`#activity`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`renderActivity(`+string(state)+`)`)); err != nil {
		t.Fatal(err)
	}
	changed, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#activity tbody tr")].map((tr) => tr.cells[2].textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"read", "apply_patchchanged: src/a.go, <img src=x onerror=window.pwned=1>, c, d, e, f, g, h +2 more"}
	if fmt.Sprint(changed) != fmt.Sprint(want) {
		t.Fatalf("tool cells %q, want %q", changed, want)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#activity img").length + (window.pwned ? 100 : 0)`)); err != nil || n != 0 {
		t.Fatalf("a path became markup: %d %v", n, err)
	}
}
