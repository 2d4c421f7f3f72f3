package geturl

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/control"
)

// uiLogin logs in to the control page as its script does and returns the
// session secret.
func (b *bridge) uiLogin(t *testing.T) string {
	t.Helper()
	var login struct{ URL string }
	b.call(t, "POST", "/api/login", nil, &login)
	tok, ok := strings.CutPrefix(login.URL, b.controlURL("/#login="))
	if !ok {
		t.Fatalf("login URL %q, want the token in the fragment of the page's URL", login.URL)
	}
	code, ans := b.redeem(t, b.controlURL(""), tok)
	if code != http.StatusOK || ans.Session == "" {
		t.Fatalf("redeeming the login: %d %+v", code, ans)
	}
	return ans.Session
}

type redeemAnswer struct {
	OK        bool
	Error     string
	Session   string
	ExpiresIn int
}

// redeem posts a login token as the page's script does, from origin.
func (b *bridge) redeem(t *testing.T, origin, tok string) (int, redeemAnswer) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"token": tok})
	req, _ := http.NewRequest("POST", b.controlURL("/ui/api/login"), strings.NewReader(string(body)))
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans redeemAnswer
	json.NewDecoder(resp.Body).Decode(&ans)
	return resp.StatusCode, ans
}

// do sends one request to the control plane and returns its status.
func do(t *testing.T, req *http.Request) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// The page's gate without a browser: reads and writes need the session
// secret in control.SessionHeader — a cookie is never enough, not even one that
// holds a live secret — and writes also the page's own Origin; a rebinding
// Host is refused.
func TestControlPageGates(t *testing.T) {
	b := startBridge(t, nil)
	sess := b.uiLogin(t)
	port := strconv.Itoa(b.Ports[1])
	own := "http://127.0.0.1:" + port
	for name, tc := range map[string]struct {
		method, origin, host string
		headers              []string // control.SessionHeader values
		cookie               string   // a geturl_ui cookie, as earlier versions set
		want                 int
	}{
		"read with the session":        {method: "GET", headers: []string{sess}, want: 200},
		"read without anything":        {method: "GET", want: 401},
		"read with the cookie alone":   {method: "GET", cookie: sess, want: 401},
		"read with a wrong session":    {method: "GET", headers: []string{sess + "x"}, want: 401},
		"read with an empty session":   {method: "GET", headers: []string{""}, want: 401},
		"read with two session values": {method: "GET", headers: []string{sess, sess}, want: 401},
		"write from the page":          {method: "POST", origin: own, headers: []string{sess}, want: 200},
		"write with the cookie alone":  {method: "POST", origin: own, cookie: sess, want: 401},
		"write without a session":      {method: "POST", origin: own, want: 401},
		"write without Origin":         {method: "POST", headers: []string{sess}, want: 403},
		"write from another origin":    {method: "POST", origin: "http://evil.example", headers: []string{sess}, want: 403},
		"write from another port":      {method: "POST", origin: "http://127.0.0.1:1", headers: []string{sess}, want: 403},
		"write from localhost origin":  {method: "POST", origin: "http://localhost:" + port, headers: []string{sess}, want: 403},
		"rebound host":                 {method: "GET", host: "evil.example:" + port, headers: []string{sess}, want: 403},
	} {
		path, body := "/ui/api/state", ""
		if tc.method == "POST" {
			path, body = "/ui/api/tunnel/stop", "{}"
		}
		req, _ := http.NewRequest(tc.method, b.controlURL(path), strings.NewReader(body))
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		for _, v := range tc.headers {
			req.Header.Add(control.SessionHeader, v)
		}
		if tc.cookie != "" {
			req.AddCookie(&http.Cookie{Name: control.LegacyCookie, Value: tc.cookie})
		}
		if got := do(t, req); got != tc.want {
			t.Errorf("%s: %d, want %d", name, got, tc.want)
		}
	}

	// The keyed API refuses the page's session, from a page or not.
	for _, origin := range []string{own, ""} {
		req, _ := http.NewRequest("GET", b.controlURL("/api/projects"), nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.Header.Set(control.SessionHeader, sess)
		if got := do(t, req); got != http.StatusForbidden && got != http.StatusUnauthorized {
			t.Errorf("keyed API with the page's session (Origin %q): %d", origin, got)
		}
	}

	// Another origin's preflight for the session header is never granted,
	// so no browser sends the header from there.
	req, _ := http.NewRequest("OPTIONS", b.controlURL("/ui/api/state"), nil)
	req.Header.Set("Origin", "http://127.0.0.1:1")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", strings.ToLower(control.SessionHeader))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for k := range resp.Header {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Errorf("preflight answered with %s: %v", k, resp.Header[k])
		}
	}

	// Logging out ends the session.
	req, _ = http.NewRequest("POST", b.controlURL("/ui/api/logout"), nil)
	req.Header.Set("Origin", own)
	req.Header.Set(control.SessionHeader, sess)
	if got := do(t, req); got != 200 {
		t.Fatalf("logout: %d", got)
	}
	req, _ = http.NewRequest("GET", b.controlURL("/ui/api/state"), nil)
	req.Header.Set(control.SessionHeader, sess)
	if got := do(t, req); got != http.StatusUnauthorized {
		t.Fatalf("a logged-out session read: %d, want 401", got)
	}
}

// The login: the token is in the URL's fragment (the browser sends it to
// no server), the page's script redeems it once, from the page's own
// origin, for a session secret; the old query-string route is gone.
func TestControlPageLogin(t *testing.T) {
	b := startBridge(t, nil)
	own := b.controlURL("")
	mint := func() string {
		var login struct{ URL string }
		b.call(t, "POST", "/api/login", nil, &login)
		tok, ok := strings.CutPrefix(login.URL, b.controlURL("/#login="))
		if !ok || tok == "" {
			t.Fatalf("login URL %q", login.URL)
		}
		return tok
	}

	for name, origin := range map[string]string{
		"no Origin":       "",
		"another port":    "http://127.0.0.1:1",
		"another site":    "http://evil.example",
		"localhost alias": "http://localhost:" + strconv.Itoa(b.Ports[1]),
	} {
		tok := mint()
		if code, ans := b.redeem(t, origin, tok); code != http.StatusForbidden || ans.Session != "" {
			t.Errorf("redeeming from %s: %d %+v, want 403", name, code, ans)
		}
	}

	tok := mint()
	code, ans := b.redeem(t, own, tok)
	if code != 200 || !ans.OK || len(ans.Session) < 40 || ans.ExpiresIn != int(control.SessionTTL/time.Second) {
		t.Fatalf("redeeming: %d %+v", code, ans)
	}
	if code, again := b.redeem(t, own, tok); code != http.StatusUnauthorized || again.Error != "login_expired" || again.Session != "" {
		t.Fatalf("a spent token: %d %+v, want 401 login_expired", code, again)
	}

	// A body over the bound is refused before a token is looked at.
	req, _ := http.NewRequest("POST", b.controlURL("/ui/api/login"), strings.NewReader(`{"token":"`+strings.Repeat("a", control.MaxLoginBody)+`"}`))
	req.Header.Set("Origin", own)
	if got := do(t, req); got != http.StatusRequestEntityTooLarge {
		t.Errorf("an oversized login body: %d, want 413", got)
	}

	// The query-string login of earlier versions sets nothing.
	tok = mint()
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(b.controlURL("/login?token=" + tok))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || len(resp.Cookies()) != 0 {
		t.Fatalf("GET /login?token=: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}

	// The page is the same for everyone and holds no secret; it sets no
	// cookie, it only drops the one earlier versions set.
	resp, err = http.Get(b.controlURL("/"))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), `id="login"`) {
		t.Fatalf("the page: %d", resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		if c.Name != control.LegacyCookie || c.Value != "" || c.MaxAge >= 0 {
			t.Errorf("the page sets a cookie: %+v", c)
		}
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "require-trusted-types-for 'script'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
}
