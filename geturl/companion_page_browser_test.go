package geturl

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// The control page's companion section in a real browser: two devices
// ask to pair, the page shows each with its name and code; the operator
// approves one and refuses the other from the page; the approved device
// binds a conversation and the page lists the binding; Revoke on the page
// ends it and the device's credential.
func TestCompanionOnTheControlPageInChromium(t *testing.T) {
	adaptertest.RequireChromium(t)
	b := startBridge(t, nil)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hi\n"), 0o644)
	b.project(t, dir, "demo", false)

	type device struct{ request, device, code, secret string }
	ask := func(name string) device {
		var raw [32]byte
		rand.Read(raw[:])
		d := device{secret: base64.RawURLEncoding.EncodeToString(raw[:])}
		st, a := companionCall(t, b, "POST", "/companion/pair", "", `{"name":"`+name+`","secret":"`+d.secret+`"}`)
		if st != http.StatusCreated {
			t.Fatalf("pair: %d %v", st, a)
		}
		d.request, d.device, d.code = a["request"].(string), a["device"].(string), a["code"].(string)
		return d
	}
	good, bad := ask("work laptop"), ask("<img src=x onerror=window.pwned=1>")

	ctx, cancel := adaptertest.Chromium(t, context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	run, text := pageSteps(t, ctx)
	var login struct{ URL string }
	b.call(t, "POST", "/api/login", nil, &login)
	goodRow, badRow := `#companion-pending tr[data-request="`+good.request+`"]`, `#companion-pending tr[data-request="`+bad.request+`"]`
	run("log in and see the requests", chromedp.Navigate(login.URL), chromedp.WaitVisible(goodRow), chromedp.WaitVisible(badRow))
	if row := text("the request", goodRow); !strings.Contains(row, "work laptop") || !strings.Contains(row, good.code) {
		t.Fatalf("the pending row: %q, want the name and code %s", row, good.code)
	}
	if row := text("the hostile name", badRow); !strings.Contains(row, "<img src=x") {
		t.Fatalf("a name that looks like markup is not shown as text: %q", row)
	}

	run("approve one, refuse the other",
		chromedp.Click(goodRow+` button[data-op="approve"]`),
		chromedp.WaitVisible(`#companion-devices tr[data-device="`+good.device+`"]`),
		chromedp.Click(badRow+` button[data-op="refuse"]`),
		chromedp.WaitNotPresent(badRow),
	)
	cred := good.device + "." + good.secret
	if st, _ := companionCall(t, b, "GET", "/companion/projects", cred, ""); st != 200 {
		t.Fatalf("the device approved on the page: %d", st)
	}
	if st, _ := companionCall(t, b, "GET", "/companion/projects", bad.device+"."+bad.secret, ""); st != http.StatusUnauthorized {
		t.Fatalf("the device refused on the page: %d", st)
	}
	if st, a := companionCall(t, b, "GET", "/companion/pair/"+bad.request, bad.device+"."+bad.secret, ""); a["state"] != "refused" {
		t.Fatalf("the refused request: %d %v", st, a)
	}

	st, bound := companionCall(t, b, "POST", "/companion/bind", cred, `{"project":"demo","conversation":"https://chat.example/c/42"}`)
	if st != http.StatusCreated {
		t.Fatalf("bind: %d %v", st, bound)
	}
	binding := `#companion-devices .binding[data-binding="` + bound["binding"].(string) + `"]`
	run("the binding shows", chromedp.WaitVisible(binding))
	if row := text("the binding", binding); !strings.Contains(row, "demo") || !strings.Contains(row, "https://chat.example/c/42") {
		t.Fatalf("binding row %q", row)
	}
	prompt := bound["prompt"].(string)
	initURL := prompt[strings.Index(prompt, "http://"):]
	if code, _ := get(t, initURL); code != 200 {
		t.Fatalf("Init while bound: %d", code)
	}
	run("revoke it", chromedp.Click(`#companion-devices tr[data-device="`+good.device+`"] button[data-op="revoke"]`),
		chromedp.WaitNotPresent(`#companion-devices tr[data-device="`+good.device+`"]`))
	if code, _ := get(t, initURL); code != http.StatusNotFound {
		t.Fatalf("Init after revoke on the page: %d", code)
	}
	if st, _ := companionCall(t, b, "GET", "/companion/projects", cred, ""); st != http.StatusUnauthorized {
		t.Fatalf("a revoked device: %d", st)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#companion-section img").length + (window.pwned ? 100 : 0)`)); err != nil || n != 0 {
		t.Fatalf("a device name became markup: %d %v", n, err)
	}
}
