package geturl

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "rewrite testdata/control-page.png from the Chromium test")

// fakeHub stands in for the supervisor's status, so the page shows the
// hub's table as it does under `hub start`.
type fakeHub struct{}

func (fakeHub) Bridge(string) (adapters.ToolBridge, bool) { return nil, false }

func (fakeHub) Status() []adapters.Status {
	return []adapters.Status{
		{Name: "aiui", State: adapters.StateRunning, Ports: []int{8686}},
		{Name: "geturl", State: adapters.StateRunning, Ports: []int{47432, 47433}, AgentSessions: 1},
		{Name: "pixelle", State: adapters.StateDisabled, Note: "disabled: set adapters.pixelle.website"},
		{Name: "stitchslop", State: adapters.StateRunning, Ports: []int{8787}, PageAttached: true, AgentSessions: 1},
	}
}

// The control page in a real browser: log in with a one-time link, add a
// project with the folder browser, create a session, copy its Init URL,
// rotate it and see the old URL 404; opt the project in to the hub's
// bridges and see that refused without write; a cross-origin form POST
// from another page is refused.
func TestControlPageInChromium(t *testing.T) {
	adaptertest.RequireChromium(t)
	s := New(func() *Config { c := NewConfig(); c.Port, c.ControlPort = 0, 0; return c }())
	h := adaptertest.Start(t, s, adaptertest.Options{Hub: fakeHub{}})
	b := &bridge{Harness: h, s: s}
	var err error
	if b.cl, err = Locate(h.Dirs); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(h.Dirs.Home, "webapp")
	os.MkdirAll(filepath.Join(proj, "src"), 0o755)
	os.WriteFile(filepath.Join(proj, "src", "main.ts"), []byte("console.log('hi')\n"), 0o644)

	ctx, cancel := adaptertest.Chromium(t, context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	poll := chromedp.WithPollingTimeout(20 * time.Second)
	run, text := pageSteps(t, ctx)
	until := func(what, expr string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Poll[bool](expr, poll)(ctx, tg)
			return chromedp.Void{}, err
		}
	}

	// Every document records what its CSP refused.
	run("watch for CSP violations", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `window.cspViolations = []; document.addEventListener("securitypolicyviolation", (e) => window.cspViolations.push(e.violatedDirective + " " + e.blockedURI));`,
		})
		return err
	}))

	// Without a login the page asks for one.
	home := b.controlURL("/")
	run("open the page", chromedp.Navigate(home), chromedp.WaitVisible("#login"))
	if hint := text("read the login hint", "#login"); !strings.Contains(hint, "hub geturl open") {
		t.Fatalf("page without a login: %q", hint)
	}

	var login struct{ URL string }
	b.call(t, "POST", "/api/login", nil, &login)
	run("log in", chromedp.Navigate(login.URL), chromedp.WaitVisible(`body[data-ready="yes"]`))
	// A login link works once.
	tok := login.URL[strings.Index(login.URL, "#login=")+len("#login="):]
	if code, _ := b.redeem(t, b.controlURL(""), tok); code != http.StatusUnauthorized {
		t.Fatalf("a spent login token answered %d", code)
	}

	run("add a project with the folder browser",
		chromedp.Click("#add-project summary"),
		chromedp.WaitVisible(`#browse-list li[title="`+proj+`"]`),
		chromedp.Click(`#browse-list li[title="`+proj+`"]`),
		chromedp.WaitVisible(`#browse-path`),
		until("the folder chosen", `document.getElementById("project-dir").value === `+strconv.Quote(proj)),
		chromedp.SendKeys("#project-name", "webapp"),
		chromedp.Click("#project-write"),
		chromedp.Click(`#project-form button[type="submit"]`),
		chromedp.WaitVisible(`#projects tr[data-project="webapp"]`),
	)
	if ps := s.mgr.Projects(); len(ps) != 1 || ps[0].Root != proj || !ps[0].Write {
		t.Fatalf("projects after the page added one: %+v", ps)
	}

	run("create a session",
		chromedp.SendKeys("#session-label", "chromium"),
		chromedp.Click(`#session-form button[type="submit"]`),
		chromedp.WaitVisible(`.session .init-url`),
	)
	initURL := text("read the Init URL", `.session .init-url`)
	run("copy it", chromedp.Click(`.session .copy-url`),
		until("the copy", `document.body.dataset.copied === `+strconv.Quote(initURL)))
	if code, body := get(t, initURL); code != 200 || !strings.Contains(body, `"bases"`) {
		t.Fatalf("the copied Init URL: %d %s", code, body)
	}
	hubTable := text("read the hub table", "#hub-table")
	if !strings.Contains(hubTable, "stitchslop") || !strings.Contains(hubTable, "disabled: set adapters.pixelle.website") {
		t.Fatalf("hub table: %q", hubTable)
	}
	if *updateScreenshot {
		run("reload with the agent's first fetch in the activity list", chromedp.EmulateViewport(1200, 1100),
			chromedp.Navigate(home), chromedp.WaitVisible(`#activity tbody tr`))
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "control-page.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	run("rotate it",
		chromedp.Click(`.session button[data-op="rotate"]`),
		until("new URLs", `document.querySelector(".session .init-url").textContent !== `+strconv.Quote(initURL)),
	)
	if code, _ := get(t, initURL); code != http.StatusNotFound {
		t.Fatalf("the old Init URL after rotate answered %d, want 404", code)
	}

	// The bridges toggle, by the CLI's rules: on with write, off with
	// write, and refused without it, the server's reason shown.
	perm := func(field string) string {
		return `#projects tr[data-project="webapp"] input[data-perm="` + field + `"]`
	}
	checked := func(field string) string { return `document.querySelector('` + perm(field) + `').checked` }
	run("opt in to the bridges",
		chromedp.Click(perm("bridges")),
		until("the opt-in shown", checked("bridges")+` && document.querySelector(".session .perms").textContent.includes("bridges: yes")`),
	)
	if ps := s.mgr.Projects(); !ps[0].Bridges {
		t.Fatalf("the bridges toggle did not opt in: %+v", ps)
	}
	run("take write away",
		chromedp.Click(perm("write")),
		until("write and the bridges off", `!`+checked("write")+` && !`+checked("bridges")+
			` && document.querySelector(".session .perms").textContent.includes("bridges: no")`),
	)
	run("opt in without write",
		chromedp.Click(perm("bridges")),
		until("the refusal shown", `document.getElementById("status").className === "bad" && `+
			`document.getElementById("status").textContent.includes("needs --write") && !`+checked("bridges")),
	)
	if ps := s.mgr.Projects(); ps[0].Bridges || ps[0].Write {
		t.Fatalf("the bridges toggle without write changed the project: %+v", ps)
	}

	if v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.cspViolations`)); err != nil || len(v) != 0 {
		t.Fatalf("the page ran into its own CSP: %q %v", v, err)
	}

	// Another page (another origin) posts a form at the control plane: a
	// form cannot send the session header, and the Origin is not the
	// page's own, so nothing is created.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><form id=f method=POST action="` + b.controlURL("/ui/api/sessions") + `" enctype="text/plain">
<input name='{"project":"webapp","x":"' value='"}'></form><script>document.getElementById("f").submit()</script>`))
	}))
	defer evil.Close()
	before := len(s.mgr.List())
	run("let another site post a form", chromedp.Navigate(evil.URL), chromedp.Sleep(500*time.Millisecond))
	if n := len(s.mgr.List()); n != before {
		t.Fatalf("a cross-origin form POST created a session (%d → %d)", before, n)
	}
}
