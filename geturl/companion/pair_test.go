package companion

import (
	"net/http"
	"os"
	"strings"
	"testing"
)

// A web page's request is refused before anything else, whatever it asks
// for and whatever it carries; so is any Host but 127.0.0.1:<control port>.
func TestOnlyTheExtensionOnLoopback(t *testing.T) {
	h := newHarness(t)
	p := h.paired("laptop")
	routes := []struct{ method, path, body string }{
		{"POST", "/companion/pair", `{"name":"x","secret":"` + newSecret() + `"}`},
		{"GET", "/companion/pair/" + p.request, ""},
		{"GET", "/companion/projects", ""},
		{"POST", "/companion/bind", `{"project":"ro","conversation":"https://chat.example/c/1"}`},
		{"POST", "/companion/heartbeat", `{"seq":1,"bindings":[]}`},
		{"POST", "/companion/disconnect", `{"binding":"b"}`},
	}
	cases := []struct {
		name   string
		edit   func(*http.Request)
		status int
		code   string
	}{
		{"https page", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, 403, "forbidden_origin"},
		{"http page", func(r *http.Request) { r.Header.Set("Origin", "http://127.0.0.1:47433") }, 403, "forbidden_origin"},
		{"null origin", func(r *http.Request) { r.Header.Set("Origin", "null") }, 403, "forbidden_origin"},
		{"two origins", func(r *http.Request) { r.Header.Add("Origin", "https://evil.example") }, 403, "forbidden_origin"},
		{"empty extension id", func(r *http.Request) { r.Header.Set("Origin", "chrome-extension://") }, 403, "forbidden_origin"},
		{"page origin, wrong host too", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example"); r.Host = "evil.example" }, 403, "forbidden_origin"},
		{"rebound host", func(r *http.Request) { r.Host = "evil.example:47433" }, 403, "forbidden_host"},
		{"localhost", func(r *http.Request) { r.Host = "localhost:47433" }, 403, "forbidden_host"},
		{"other port", func(r *http.Request) { r.Host = "127.0.0.1:47432" }, 403, "forbidden_host"},
	}
	for _, c := range cases {
		for _, rt := range routes {
			a := h.do(rt.method, rt.path, p.cred(), rt.body, c.edit)
			if a.status != c.status || a.str("error") != c.code {
				t.Errorf("%s: %s %s: %d %s, want %d %s", c.name, rt.method, rt.path, a.status, a.raw, c.status, c.code)
			}
		}
	}
	// Without an Origin (Chromium sends none on an extension's GETs): only
	// the device-authenticated GETs, and only with the device's credential.
	noOrigin := func(r *http.Request) { r.Header.Del("Origin") }
	for _, rt := range routes {
		a := h.do(rt.method, rt.path, p.cred(), rt.body, noOrigin)
		if rt.method == "GET" {
			if a.status != 200 {
				t.Errorf("no Origin: %s %s with the credential: %d %s", rt.method, rt.path, a.status, a.raw)
			}
			if a := h.do(rt.method, rt.path, "", rt.body, noOrigin); a.status != http.StatusUnauthorized {
				t.Errorf("no Origin: %s %s without the credential: %d %s", rt.method, rt.path, a.status, a.raw)
			}
		} else if a.status != 403 || a.str("error") != "forbidden_origin" {
			t.Errorf("no Origin: %s %s: %d %s", rt.method, rt.path, a.status, a.raw)
		}
	}
	if a := h.do("GET", "/companion/projects", p.cred(), "", func(r *http.Request) { r.Header.Set("Origin", "moz-extension://1234-abcd") }); a.status != 200 {
		t.Errorf("a Firefox extension's origin: %d %s", a.status, a.raw)
	}
	if len(h.svc.Overview().Pending) != 0 {
		t.Error("a refused request made a pairing request")
	}
}

// Pairing: the operator approves or refuses; requests are capped before
// any authentication and expire; only the device holding the secret it
// paired with is authenticated; companion.json keeps the secret's hash,
// never the secret, and so do the logs.
func TestPairing(t *testing.T) {
	h := newHarness(t)

	approved, a := h.pair("work laptop")
	if a.status != http.StatusCreated || len(approved.code) != 6 || strings.Trim(approved.code, codeAlphabet) != "" || a.body["expires_in_ms"] != float64(300000) {
		t.Fatalf("pair: %d %s", a.status, a.raw)
	}
	ov := h.svc.Overview()
	if len(ov.Pending) != 1 || ov.Pending[0].Code != approved.code || ov.Pending[0].Name != "work laptop" {
		t.Fatalf("pending: %+v", ov.Pending)
	}
	poll := func(p pairing, cred string) answer { return h.do("GET", "/companion/pair/"+p.request, cred, "") }
	if a := poll(approved, approved.cred()); a.str("state") != "pending" {
		t.Fatalf("poll: %s", a.raw)
	}
	if a := h.do("GET", "/companion/projects", approved.cred(), ""); a.status != http.StatusUnauthorized {
		t.Fatalf("an unapproved device was authenticated: %d", a.status)
	}
	if err := h.svc.Approve(approved.request); err != nil {
		t.Fatal(err)
	}
	if a := poll(approved, approved.cred()); a.str("state") != "approved" {
		t.Fatalf("poll after approve: %s", a.raw)
	}
	if a := h.do("GET", "/companion/projects", approved.cred(), ""); a.status != 200 ||
		!strings.Contains(a.raw, `{"name":"ro","write":false,"terminal":false}`) || !strings.Contains(a.raw, `{"name":"rw","write":true,"terminal":true}`) {
		t.Fatalf("projects: %d %s", a.status, a.raw)
	}
	if err := h.svc.Approve(approved.request); err == nil {
		t.Fatal("a request was approved twice")
	}

	refused, _ := h.pair("stranger")
	if err := h.svc.Refuse(refused.request); err != nil {
		t.Fatal(err)
	}
	if a := poll(refused, refused.cred()); a.str("state") != "refused" {
		t.Fatalf("poll after refuse: %s", a.raw)
	}
	if a := h.do("GET", "/companion/projects", refused.cred(), ""); a.status != http.StatusUnauthorized {
		t.Fatal("a refused device was authenticated")
	}

	// Wrong credentials, each answered 401 alike.
	other := newSecret()
	for name, cred := range map[string]string{
		"wrong secret":        approved.device + "." + other,
		"secret one byte off": approved.device + "." + offByOne(approved.secret),
		"unknown device":      "d0123456789abcdef." + approved.secret,
		"no dot":              approved.device + approved.secret,
		"empty":               "",
		"refused device":      refused.cred(),
	} {
		if a := h.do("GET", "/companion/projects", cred, ""); a.status != http.StatusUnauthorized || a.str("error") != "unauthorized" {
			t.Errorf("%s: %d %s", name, a.status, a.raw)
		}
		if a := h.do("POST", "/companion/heartbeat", cred, `{"seq":1,"bindings":[]}`); a.status != http.StatusUnauthorized {
			t.Errorf("%s: heartbeat %d", name, a.status)
		}
	}
	if a := poll(approved, approved.device+"."+other); a.status != http.StatusUnauthorized {
		t.Errorf("poll with a wrong secret: %d", a.status)
	}

	// The pending cap, before authentication; expiry frees it.
	var waiting []pairing
	for range MaxPending {
		p, a := h.pair("flood")
		if a.status != http.StatusCreated {
			t.Fatalf("request %d: %d %s", len(waiting), a.status, a.raw)
		}
		waiting = append(waiting, p)
	}
	if _, a := h.pair("one more"); a.status != http.StatusTooManyRequests || a.str("error") != "too_many_pending" {
		t.Fatalf("over the cap: %d %s", a.status, a.raw)
	}
	h.clock.Advance(PairTTL - 1)
	if _, a := h.pair("one more"); a.status != http.StatusTooManyRequests {
		t.Fatalf("before expiry: %d", a.status)
	}
	h.clock.Advance(1)
	if a := poll(waiting[0], waiting[0].cred()); a.str("state") != "expired" {
		t.Fatalf("poll after expiry: %s", a.raw)
	}
	if err := h.svc.Approve(waiting[0].request); err == nil {
		t.Fatal("an expired request was approved")
	}
	if _, a := h.pair("after expiry"); a.status != http.StatusCreated {
		t.Fatalf("after expiry: %d %s", a.status, a.raw)
	}

	// At rest: 0600, the hash, never the secret.
	fi, err := os.Stat(h.path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("companion.json mode %v", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(h.path())
	hash := hashHex(approved.secret)
	if !strings.Contains(string(b), hash) {
		t.Errorf("companion.json lacks the secret's hash:\n%s", b)
	}
	for _, p := range append(waiting, approved, refused) {
		if strings.Contains(string(b), p.secret) {
			t.Errorf("companion.json holds a secret")
		}
		if strings.Contains(h.logs.String(), p.secret) {
			t.Errorf("the log holds a secret")
		}
	}
	if strings.Contains(string(b), "refused") || strings.Contains(string(b), "flood") {
		t.Errorf("unapproved requests reached companion.json:\n%s", b)
	}
}

// A corrupt, unsafe or unreadable companion.json trusts no device, says
// so once, is left as it is, and crashes nothing.
func TestUnreadableFileTrustsNoDevice(t *testing.T) {
	cases := map[string]func(path string){
		"corrupt":  func(path string) { os.WriteFile(path, []byte("{not json"), 0o600) },
		"readable": func(path string) { os.Chmod(path, 0o644) },
		"symlink": func(path string) {
			os.Rename(path, path+".real")
			os.Symlink(path+".real", path)
		},
		"bad hash": func(path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, []byte(strings.Replace(string(b), `"hash": "`, `"hash": "zz`, 1)), 0o600)
		},
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			p := h.paired("laptop")
			b := h.mustBind(p, "ro", "https://chat.example/c/1")
			manual, _ := h.mgr.NewSession("ro", "by hand")
			spoil(h.path())
			before, _ := os.ReadFile(h.path())
			h.svc = h.open()
			if a := h.do("GET", "/companion/projects", p.cred(), ""); a.status != http.StatusUnauthorized {
				t.Fatalf("a device was trusted from an unreadable file: %d", a.status)
			}
			if !strings.Contains(h.logs.String(), "companion devices not trusted") {
				t.Error("no log line says why")
			}
			if _, a := h.pair("again"); a.status != http.StatusServiceUnavailable {
				t.Errorf("pairing over an unreadable file: %d", a.status)
			}
			if ov := h.svc.Overview(); ov.Unavailable == "" {
				t.Error("the operator is not told")
			}
			after, _ := os.ReadFile(h.path())
			if string(after) != string(before) {
				t.Error("the unreadable file was changed")
			}
			// The binding the file can no longer vouch for does not live on
			// as a session without a lease; a session made by hand does.
			if v, err := h.mgr.Session(b.session); err == nil && v.Live {
				t.Error("the companion session lives on without its lease")
			}
			if v, err := h.mgr.Session(manual.ID); err != nil || !v.Live {
				t.Errorf("the manual session: %+v %v", v, err)
			}
		})
	}
}

// Revoking a device forgets it: its credential fails.
func TestRevoke(t *testing.T) {
	h := newHarness(t)
	p := h.paired("laptop")
	q := h.paired("desktop")
	if err := h.svc.Revoke(p.device); err != nil {
		t.Fatal(err)
	}
	if a := h.do("GET", "/companion/projects", p.cred(), ""); a.status != http.StatusUnauthorized {
		t.Fatalf("revoked device: %d", a.status)
	}
	if a := h.do("GET", "/companion/projects", q.cred(), ""); a.status != 200 {
		t.Fatalf("other device: %d", a.status)
	}
	if err := h.svc.Revoke(p.device); err == nil {
		t.Fatal("revoked twice")
	}
	b, _ := os.ReadFile(h.path())
	if strings.Contains(string(b), p.device) {
		t.Error("a revoked device stays in companion.json")
	}
}

// offByOne changes one character of a secret, keeping it well-formed.
func offByOne(s string) string {
	c := byte('A')
	if s[10] == 'A' {
		c = 'B'
	}
	return s[:10] + string(c) + s[11:]
}
