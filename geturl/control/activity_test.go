package control

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hubdev/hub/adapters/adaptertest"
)

// The list's bounds and the join of a change with its request, either
// order; a change whose request never shows is forgotten in bounded time.
func TestActivityLogChangedPaths(t *testing.T) {
	l := NewActivity()
	many := make([]string, 20)
	for i := range many {
		many[i] = fmt.Sprintf("d/f%d", i)
	}
	// Change first, then the request's entry.
	l.Changed("s1", "c1", many)
	l.Add(Entry{Session: "s1", Route: "/a", Call: "c1"})
	// Entry first (answered pending), then the change; a poll and a replay
	// of the same call stay without paths.
	l.Add(Entry{Session: "s1", Route: "/w", Call: "c2"})
	l.Add(Entry{Session: "s1", Route: "/j", Call: "c2"})
	l.Add(Entry{Session: "s1", Route: "/w", Call: "c2", Replayed: true})
	l.Changed("s1", "c2", []string{"x.txt"})
	// Another session's identical call id is another intent.
	l.Add(Entry{Session: "s2", Route: "/w", Call: "c2"})

	got := map[string]string{}
	for _, e := range l.Recent() {
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
		l.Changed("s3", fmt.Sprint("orphan", i), []string{"o"})
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
	l := NewActivity()
	l.Changed("s1", "c1", []string{"src/a.go", "<img src=x onerror=window.pwned=1>", "c", "d", "e", "f", "g", "h", "i", "j"})
	l.Add(Entry{At: time.Now(), Session: "s1", Route: "/a", Tool: "apply_patch", Status: 200, Call: "c1"})
	l.Add(Entry{At: time.Now(), Session: "s1", Route: "/r", Tool: "read", Status: 200})
	state, err := json.Marshal(l.Recent())
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
