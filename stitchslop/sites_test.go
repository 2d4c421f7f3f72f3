package stitchslop

import (
	"path/filepath"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// Issue 28 item 3: a bridge admits its own --origin, plus the production
// and loopback sites this machine holds a pairing (or an armed token)
// for; each must present that site's own secret. Nothing else is
// admitted, whatever pairing.json holds, and no site attaches with
// another's secret or token.
func TestWhoMayConnect(t *testing.T) {
	b := startBridge(t, nil)
	store := &pairingStore{dir: b.configDir()}
	for origin, secret := range map[string]string{
		"http://localhost:5173":      "s-local",
		"https://www.stitchslop.com": "s-prod",
		"https://staging.example":    "s-staging", // paired, but neither production nor loopback
	} {
		if err := store.Redeem(origin, "tok-seed-"+secret, secret); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, origin string
		hs           map[string]any
		want         string // "hello", "forbidden" (403 at the upgrade), or the error code
	}{
		{"own origin, its token", testOrigin, map[string]any{"token": testToken}, "hello"},
		{"paired loopback site, its secret", "http://localhost:5173", map[string]any{"secret": "s-local"}, "hello"},
		{"paired loopback site, trailing slash", "http://LOCALHOST:5173/", map[string]any{"secret": "s-local"}, "hello"},
		{"paired production site, its secret", "https://www.stitchslop.com", map[string]any{"secret": "s-prod"}, "hello"},
		{"paired site claiming another site's secret", "http://localhost:5173", map[string]any{"secret": "s-prod"}, "bad_credential"},
		{"paired site with no secret", "http://localhost:5173", map[string]any{"secret": "guess"}, "bad_credential"},
		{"paired site with the own site's token", "https://www.stitchslop.com", map[string]any{"token": "tok-seed-unused"}, "bad_credential"},
		{"paired site neither production nor loopback", "https://staging.example", map[string]any{"secret": "s-staging"}, "forbidden"},
		{"loopback site never paired", "http://localhost:3000", map[string]any{"secret": "s-local"}, "forbidden"},
		{"another site", "https://evil.example", map[string]any{"secret": "s-prod"}, "forbidden"},
		{"no origin", "", map[string]any{"secret": "s-prod"}, "forbidden"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := b.handshakeFrom(t, tc.origin, tc.hs)
			if got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
	st := b.S.Report()
	want := map[string]bool{testOrigin: true, "http://localhost:5173": true, "https://www.stitchslop.com": true}
	if len(st.PairedSites) != len(want) || st.PairedSites[0] != testOrigin {
		t.Fatalf("pairedSites %v, want the own site first and the two others", st.PairedSites)
	}
	for _, s := range st.PairedSites {
		if !want[s] {
			t.Fatalf("pairedSites lists %s", s)
		}
	}
}

// A token armed for a loopback site (POST /pair with origin) admits a
// page of that site once: it pairs, says so, and comes back with its
// secret. A token cannot be armed for a site that is never admitted.
func TestTokenArmedForAnotherSite(t *testing.T) {
	b := startBridge(t, nil)
	const dev = "http://127.0.0.1:3000"
	if got := b.handshakeFrom(t, dev, map[string]any{"token": "tok_dev"}); got != "forbidden" {
		t.Fatalf("before arming: %s", got)
	}
	r := mustJSON(t, b.control("POST", "/pair", `{"token":"tok_dev","origin":"http://127.0.0.1:3000/"}`).Body)
	if r["ok"] != true {
		t.Fatalf("/pair = %v", r)
	}
	if st := b.S.Report(); len(st.ArmedSites) != 2 || st.ArmedSites[0] != dev {
		t.Fatalf("armedSites %v", st.ArmedSites)
	}
	// The own site's page cannot spend the dev site's token.
	if got := b.handshakeFrom(t, testOrigin, map[string]any{"token": "tok_dev"}); got != "bad_credential" {
		t.Fatalf("own site with the dev token: %s", got)
	}
	p := b.dialFrom(t, dev)
	p.send(map[string]any{"token": "tok_dev"})
	hello := p.next()
	secret, _ := hello["pairingSecret"].(string)
	if hello["hello"] != ServerName || secret == "" {
		t.Fatalf("dev page: %v", hello)
	}
	b.waitConnected(true)
	if st := b.S.Report(); st.PageOrigin != dev || st.AttachedWith != "token" || len(st.ArmedSites) != 1 {
		t.Fatalf("report %+v", st)
	}
	p.Close()
	b.waitConnected(false)
	if got := b.handshakeFrom(t, dev, map[string]any{"token": "tok_dev"}); got != "bad_credential" {
		t.Fatalf("the spent token again: %s", got)
	}
	if got := b.handshakeFrom(t, dev, map[string]any{"secret": secret}); got != "hello" {
		t.Fatalf("the dev page's pairing: %s", got)
	}
	if (&pairingStore{dir: filepath.Join(b.Dirs.Home, ".stitchslop")}).Paired(testOrigin) {
		t.Fatal("the dev page's pairing was stored for the bridge's own site")
	}
	for _, body := range []string{`{"token":"t","origin":"https://evil.example"}`, `{"token":"t","origin":"not an origin"}`} {
		if r := mustJSON(t, b.control("POST", "/pair", body).Body); r["ok"] != false {
			t.Fatalf("/pair %s = %v", body, r)
		}
	}
}

// dialFrom dials the page socket as a page of origin.
func (b *bridge) dialFrom(t *testing.T, origin string) *page {
	t.Helper()
	c, err := b.Dial("/", adaptertest.DialOptions{Origin: origin})
	if err != nil {
		t.Fatalf("dial from %s: %v", origin, err)
	}
	return &page{t: t, WSClient: c}
}

// handshakeFrom dials as a page of origin ("" sends none), sends hs and
// says what came of it: "hello" (then it leaves again), "forbidden" (403
// at the upgrade), or the error code.
func (b *bridge) handshakeFrom(t *testing.T, origin string, hs map[string]any) string {
	t.Helper()
	c, err := b.Dial("/", adaptertest.DialOptions{Origin: origin})
	if err != nil {
		if c != nil && c.Status() == 403 {
			return "forbidden"
		}
		return "dial failed: " + err.Error()
	}
	p := &page{t: t, WSClient: c}
	defer c.Close()
	p.send(hs)
	m := p.next()
	if m["hello"] == ServerName {
		c.Close()
		b.waitConnected(false)
		return "hello"
	}
	code, _ := m["error"].(string)
	return code
}
