package geturl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/geturl/companion/extension"
)

// companionBrowser starts a headless Chromium with the companion exported
// and loaded (Debian's chromium runs MV3 extensions headless) and returns
// its context, the extension's id (from its service worker's URL) and the
// function that closes the browser.
func companionBrowser(t *testing.T) (context.Context, string, context.CancelFunc) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "companion")
	if err := extension.Export(dir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := adaptertest.Chromium(t, context.Background(),
		chromedp.Flag("headless", "new"),
		chromedp.Flag("load-extension", dir),
		chromedp.Flag("disable-extensions-except", dir))
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		cancel()
		t.Fatalf("start chromium: %v", err)
	}
	swURL := regexp.MustCompile(`^chrome-extension://([a-p]{32})/background\.js$`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		targets, err := chromedp.Targets(ctx)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		for _, tg := range targets {
			if m := swURL.FindStringSubmatch(tg.URL); tg.Type == "service_worker" && m != nil {
				return ctx, m[1], cancel
			}
		}
	}
	cancel()
	t.Fatal("the companion's service worker never started: the extension did not load")
	return nil, "", nil
}

// chatPage is a loopback stand-in for a chat site: a form with a textarea
// and a contenteditable div, or (under /rich/) the div alone, as chat
// sites use one or the other. It notes any submit in body[data-submitted].
func chatPage(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><meta charset="utf-8"><title>chat</title><body>
<h1>A chat with a remote agent</h1>
` + chatInput(r) + `
<script>
window.inputs = 0;
document.addEventListener("input", () => window.inputs++);
document.addEventListener("submit", (e) => { e.preventDefault(); document.body.dataset.submitted = "yes"; });
</script></body>`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func chatInput(r *http.Request) string {
	rich := `<div id="rich" contenteditable="true" style="min-height:3em;border:1px solid #ccc"></div>`
	if strings.HasPrefix(r.URL.Path, "/rich/") {
		return rich
	}
	return `<form id="chat" action="/sent" method="post"><textarea id="message" rows="6" cols="80"></textarea><button>Send</button></form>` + rich
}

// The companion end to end in real Chromium with the extension loaded:
// pairing approved on the control page, a bound chat tab gets the Init
// prompt in its input, a data-plane read works while the lease lives and
// fails at once after Disconnect, and after the browser closes once the
// lease runs out; a replayed heartbeat is refused and a fresh one for the
// ended binding answers ended.
func TestCompanionInChromium(t *testing.T) {
	adaptertest.RequireChromium(t)
	b := startBridge(t, func(c *Config) { c.Companion.Lease = 2 * time.Second })
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "README.md"), []byte("hello from the project\n"), 0o644)
	b.project(t, proj, "webapp", false)
	chat := chatPage(t)

	ctx, extID, closeBrowser := companionBrowser(t)
	defer closeBrowser()
	ctx, cancelT := context.WithTimeout(ctx, 120*time.Second)
	defer cancelT()
	poll := chromedp.WithPollingTimeout(30 * time.Second)
	run := func(ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	until := func(expr string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Poll[bool](expr, poll)(ctx, tg)
			return chromedp.Void{}, err
		}
	}
	evalJSON := func(ctx context.Context, what, expr string, out any) {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => JSON.stringify(await (`+expr+`)))()`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := json.Unmarshal([]byte(s), out); err != nil {
			t.Fatalf("%s: %v in %s", what, err, s)
		}
	}

	// The operator's control page, logged in.
	var login struct{ URL string }
	b.call(t, "POST", "/api/login", nil, &login)
	run(ctx, "log in to the control page", chromedp.EmulateViewport(800, 600), chromedp.Navigate(login.URL), chromedp.WaitVisible(`body[data-ready="yes"]`))

	// The popup, in a tab of its own.
	popup, cancelPopup := chromedp.NewContext(ctx)
	defer cancelPopup()
	popupURL := "chrome-extension://" + extID + "/popup.html"
	run(popup, "open the popup", chromedp.EmulateViewport(380, 400), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `window.cspViolations = []; document.addEventListener("securitypolicyviolation", (e) => window.cspViolations.push(e.violatedDirective + " " + e.blockedURI));`,
		})
		return err
	}), chromedp.Navigate(popupURL), chromedp.WaitVisible(`body[data-ready="yes"]`))
	run(popup, "pair",
		chromedp.SetValue("#port", strconv.Itoa(b.Ports[1])),
		chromedp.SetValue("#name", "chromium under test"),
		chromedp.Click("#pair"),
		chromedp.WaitVisible("#code"),
		until(`/^[A-Z2-9]{6}$/.test(document.getElementById("code").textContent)`),
	)
	code, err := chromedp.Run(popup, chromedp.Text("#code"))
	if err != nil {
		t.Fatal(err)
	}

	// The control page shows the request with the same code; approve it
	// there.
	row := `[...document.querySelectorAll("#companion-pending tr[data-request]")].find((r) => r.querySelector(".pair-code").textContent === ` + strconv.Quote(code) + `)`
	run(ctx, "see the request on the control page", until(row+` !== undefined`))
	req, err := chromedp.Run(ctx, chromedp.Evaluate[string](row+`.dataset.request`))
	if err != nil {
		t.Fatal(err)
	}
	run(ctx, "approve it on the control page",
		chromedp.Click(`#companion-pending tr[data-request="`+req+`"] button[data-op="approve"]`),
		chromedp.WaitVisible(`#companion-devices tr[data-device]`),
	)
	run(popup, "the popup shows paired", until(`document.body.dataset.state === "paired"`),
		until(`document.querySelector("#project option[value=webapp]") !== null`))

	// The chat tab, bound from the popup's context with the message its
	// button sends (the popup's button binds the active tab, which is the
	// popup itself here).
	chatTab, cancelChat := chromedp.NewContext(ctx)
	defer cancelChat()
	run(chatTab, "open the chat page", chromedp.EmulateViewport(800, 600), chromedp.Navigate(chat.URL+"/c/42?draft=1"), chromedp.WaitVisible("#message"))
	bindChat := func(what, into string) {
		t.Helper()
		var tabs []struct{ ID int }
		evalJSON(popup, "find the chat tab", `chrome.tabs.query({url: `+strconv.Quote(chat.URL+"/*")+`})`, &tabs)
		if len(tabs) != 1 {
			t.Fatalf("%s: chat tabs %+v", what, tabs)
		}
		var ans struct {
			OK      bool
			Message string
			Value   struct{ Into string }
		}
		evalJSON(popup, what, `chrome.runtime.sendMessage({op: "bind", tabId: `+strconv.Itoa(tabs[0].ID)+`, project: "webapp"})`, &ans)
		if !ans.OK || ans.Value.Into != into {
			t.Fatalf("%s: %+v", what, ans)
		}
	}
	bindChat("bind the chat tab", "textarea")

	prompt, err := chromedp.Run(chatTab, chromedp.Evaluate[string](`document.getElementById("message").value`))
	if err != nil {
		t.Fatal(err)
	}
	initURL := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\S+`).FindString(prompt)
	if !strings.HasPrefix(prompt, "You can work in my local project") || initURL == "" {
		t.Fatalf("the chat input holds %q, want the Init prompt", prompt)
	}
	if v, err := chromedp.Run(chatTab, chromedp.Evaluate[bool](`window.inputs > 0 && document.body.dataset.submitted !== "yes"`)); err != nil || !v {
		t.Fatalf("the insertion fired no input event, or submitted the form (%v)", err)
	}
	readURL := func(initURL string) string {
		r, _ := initBases(t, initURL)
		return r + "/r?path=README.md"
	}
	read := readURL(initURL)
	if code, body := get(t, read); code != 200 || !strings.Contains(body, "hello from the project") {
		t.Fatalf("the read while the lease lives: %d %s", code, body)
	}
	// The heartbeat renews the lease (2 s): wait until the hub shows it
	// renewed past where the first one would have run out, and read again.
	first := leaseUntil(t, b)
	for deadline := time.Now().Add(30 * time.Second); !leaseUntil(t, b).After(first.Add(2 * time.Second)); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the lease was not renewed past %v", first)
		}
	}
	if code, body := get(t, read); code != 200 || !strings.Contains(body, "hello from the project") {
		t.Fatalf("the read after the lease was renewed: %d %s", code, body)
	}
	if v, err := chromedp.Run(popup, chromedp.Evaluate[[]string](`window.cspViolations`)); err != nil || len(v) != 0 {
		t.Fatalf("the popup ran into its CSP: %q %v", v, err)
	}
	shot(t, popup, "companion-popup.png", `document.querySelectorAll("#bindings li").length === 1`)
	shot(t, ctx, "companion-devices.png", `document.querySelector("#companion-devices .binding") !== null && `+
		`(document.getElementById("companion-section").scrollIntoView(), true)`)

	// (a) Disconnect in the popup: the read fails at once.
	run(popup, "disconnect", chromedp.Click(`#bindings li button[data-op="disconnect"]`),
		until(`document.getElementById("status").textContent === "Disconnected." && document.querySelectorAll("#bindings li").length === 0`))
	if code, _ := get(t, read); code == 200 {
		t.Fatalf("the read after Disconnect answered %d", code)
	}

	// untilRefused waits (a generous deadline, no timing asserted) until
	// the read stops working.
	untilRefused := func(what, read string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			if code, _ := get(t, read); code != 200 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the read still works long after %s", what)
			}
		}
	}
	textarea := func() string {
		t.Helper()
		v, err := chromedp.Run(chatTab, chromedp.Evaluate[string](`document.getElementById("message").value`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	// The bound tab closes while the browser stays open: the extension
	// stops heartbeating its binding, so the read stops working.
	// (The same document again: the content script is there already.)
	bindChat("bind the chat tab once more", "textarea")
	read = readURL(regexp.MustCompile(`http://127\.0\.0\.1:\d+/\S+`).FindString(textarea()))
	if code, _ := get(t, read); code != 200 {
		t.Fatalf("the read of the rebound chat: %d", code)
	}
	cancelChat()
	untilRefused("its tab closed", read)

	// (b) Bind again, then close the browser: the read fails once the
	// lease has run out. This chat's input is a contenteditable element.
	chatTab, cancelChat = chromedp.NewContext(ctx)
	defer cancelChat()
	run(chatTab, "open a rich-input chat", chromedp.Navigate(chat.URL+"/rich/7"), chromedp.WaitVisible("#rich"))
	bindChat("bind the rich-input chat", "contenteditable")
	prompt, _ = chromedp.Run(chatTab, chromedp.Evaluate[string](`document.getElementById("rich").textContent`))
	if !strings.HasPrefix(prompt, "You can work in my local project") {
		t.Fatalf("the contenteditable input holds %q, want the Init prompt", prompt)
	}
	read = readURL(regexp.MustCompile(`http://127\.0\.0\.1:\d+/\S+`).FindString(prompt))
	if code, _ := get(t, read); code != 200 {
		t.Fatalf("the read of the second binding: %d", code)
	}
	// What a local attacker could have captured: the device credential and
	// the last heartbeat's seq (read through the extension's own page).
	var stored struct {
		Companion struct {
			Device, Secret string
			Seq            int64
			Bindings       []struct {
				Binding    string
				Generation int64
			}
		}
	}
	evalJSON(popup, "read the extension's storage", `chrome.storage.local.get("companion")`, &stored)
	st := stored.Companion
	if st.Secret == "" || st.Seq == 0 || len(st.Bindings) != 1 {
		t.Fatalf("the extension's storage: seq %d, %d bindings, secret set: %v", st.Seq, len(st.Bindings), st.Secret != "")
	}
	closeBrowser()
	untilRefused("the browser closed", read)

	// (c) The last heartbeat replayed: refused; a fresh seq for the ended
	// binding: ended, and the read stays refused.
	beat := func(seq int64) (int, string) {
		body, _ := json.Marshal(map[string]any{"seq": seq, "bindings": []map[string]any{
			{"binding": st.Bindings[0].Binding, "generation": st.Bindings[0].Generation}}})
		req, _ := http.NewRequest("POST", b.controlURL("/companion/heartbeat"), bytes.NewReader(body))
		req.Header.Set("Origin", "chrome-extension://"+extID)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+st.Device+"."+st.Secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out bytes.Buffer
		out.ReadFrom(resp.Body)
		return resp.StatusCode, out.String()
	}
	if code, body := beat(st.Seq); code != http.StatusConflict || !strings.Contains(body, "stale_heartbeat") {
		t.Fatalf("the replayed heartbeat (seq %d): %d %s, want 409 stale_heartbeat", st.Seq, code, body)
	}
	if code, body := beat(st.Seq + 1000); code != 200 || !strings.Contains(body, `"ended"`) {
		t.Fatalf("a fresh heartbeat for the ended binding: %d %s, want it ended", code, body)
	}
	if code, _ := get(t, read); code == 200 {
		t.Fatal("a heartbeat brought the ended binding's read back")
	}
}

// leaseUntil is the one live binding's lease end, as the operator sees it.
func leaseUntil(t *testing.T, b *bridge) time.Time {
	t.Helper()
	var ov struct {
		Companion struct {
			Devices []struct {
				Bindings []struct{ LeaseUntil time.Time }
			}
		}
	}
	b.call(t, "GET", "/api/companion", nil, &ov)
	if len(ov.Companion.Devices) != 1 || len(ov.Companion.Devices[0].Bindings) != 1 {
		t.Fatalf("devices and bindings: %+v", ov.Companion.Devices)
	}
	return ov.Companion.Devices[0].Bindings[0].LeaseUntil
}

// shot saves a screenshot of the tab into $HUB_SCREENSHOTS/name once cond
// holds, when HUB_SCREENSHOTS is set (the README's images).
func shot(t *testing.T, ctx context.Context, name, cond string) {
	t.Helper()
	dir := os.Getenv("HUB_SCREENSHOTS")
	if dir == "" {
		return
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "wrote %s (%d bytes)\n", filepath.Join(dir, name), len(png))
}
