package stitchslop

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// §2.1 listening.

func TestListenLoopbackOnlyAndReportsBoundPort(t *testing.T) {
	b := startBridge(t, nil)
	if b.Port() == 0 {
		t.Fatal("no port reported")
	}
	st := b.S.Status()
	if len(st.Ports) != 1 || st.Ports[0] != b.Port() {
		t.Fatalf("status ports %v, want [%d]", st.Ports, b.Port())
	}
	// Nothing answers on another interface address of the same port.
	if addrs, _ := netInterfaceAddrs(); len(addrs) > 0 {
		for _, a := range addrs {
			if _, err := adaptertest.Do("http://"+a+":"+itoa(b.Port())+"/", adaptertest.Request{}); err == nil {
				t.Fatalf("bridge answered on %s; must bind 127.0.0.1 only", a)
			}
		}
	}
}

func TestListenFirstFreePortInOrder(t *testing.T) {
	busy := listenOn(t, 0)
	free := freePort(t)
	b := startBridge(t, func(o *Config) { o.Ports = []int{busy, free} })
	if b.Port() != free {
		t.Fatalf("bound %d, want the first free port %d", b.Port(), free)
	}
}

func TestListenAllBusyFails(t *testing.T) {
	p1, p2 := listenOn(t, 0), listenOn(t, 0)
	s, err := New(&Config{Origin: testOrigin, Ports: []int{p1, p2}, ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	env := testEnv(t)
	err = s.Serve(t.Context(), env)
	if err == nil || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("Serve with every port busy = %v, want an error saying so", err)
	}
}

// §2.1: the page walks 8787, 8788, 8789, 8790 in that order, so the bridge
// must scan exactly those by default — standalone, under the supervisor
// (NewConfig, default.yaml) and when Options leave Ports empty.
func TestDefaultPortsAreTheSpecsFour(t *testing.T) {
	want := "[8787 8788 8789 8790]"
	if got := fmt.Sprint(DefaultPorts); got != want {
		t.Fatalf("DefaultPorts = %s, want %s", got, want)
	}
	s, err := New(&Config{Origin: testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s.cfg.Ports); got != want {
		t.Fatalf("New with no ports scans %s, want %s", got, want)
	}
	cfg := NewConfig()
	if got := fmt.Sprint(cfg.Ports); got != want || cfg.Origin != "https://www.stitchslop.com" || cfg.ConfigDir != DefaultConfigDir {
		t.Fatalf("NewConfig = %+v", cfg)
	}
	a, err := Factory().New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(a.(*Server).cfg.Ports); got != want {
		t.Fatalf("the supervised adapter scans %s, want %s", got, want)
	}
}

// §2.2 origin check.

func TestOriginCheck(t *testing.T) {
	b := startBridge(t, nil)
	cases := []struct {
		name   string
		origin string
		want   int // 101 = upgraded
	}{
		{"exact", testOrigin, 101},
		// §2.2: compared case-insensitively, a trailing slash ignored
		// (the contract's own rule, kept although other adapters match
		// exactly).
		{"case-insensitive", "HTTPS://WWW.StitchSlop.TEST", 101},
		{"trailing slash", testOrigin + "/", 101},
		{"missing", "", 403},
		{"null", "null", 403},
		{"other site", "https://evil.example", 403},
		{"http instead of https", "http://www.stitchslop.test", 403},
		{"suffix trick", "https://www.stitchslop.test.evil.example", 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := b.Dial("/", adaptertest.DialOptions{Origin: tc.origin})
			if tc.want == 101 {
				if err != nil {
					t.Fatalf("dial: %v (status %d)", err, c.Status())
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("upgrade accepted")
			}
			if c.Status() != tc.want {
				t.Fatalf("status %d, want %d", c.Status(), tc.want)
			}
		})
	}
	attempts, refusals := b.run().refusals.snapshot()
	if attempts != len(cases) {
		t.Errorf("attempts = %d, want %d", attempts, len(cases))
	}
	found := false
	for _, r := range refusals {
		if r.Reason == ReasonOrigin && r.Detail == "(none)" {
			found = true
		}
	}
	if !found {
		t.Errorf("missing Origin not logged as a refusal: %+v", refusals)
	}
}

func TestNonUpgradeIs426(t *testing.T) {
	b := startBridge(t, nil)
	for _, path := range []string{"/", "/ws", "/status/extra"} {
		r := b.Do(adaptertest.Request{Path: path})
		if r.Status != http.StatusUpgradeRequired {
			t.Errorf("GET %s = %d, want 426", path, r.Status)
		}
	}
	// A known route with the wrong method is "anything else" too.
	if r := b.Do(adaptertest.Request{Method: "POST", Path: "/status", Header: http.Header{KeyHeader: {b.S.Key()}}}); r.Status != 426 {
		t.Errorf("POST /status = %d, want 426", r.Status)
	}
}

// A DNS-rebinding page reads its own origin's answers, so even the 426
// fallback must refuse a foreign Host rather than describe the bridge.
func TestNonUpgradeWithForeignHostRefused(t *testing.T) {
	b := startBridge(t, nil)
	host := "evil.example:" + itoa(b.Port())
	for _, req := range []adaptertest.Request{{Path: "/"}, {Path: "/ws"}, {Method: "POST", Path: "/status"}} {
		req.Host = host
		r := b.Do(req)
		if r.Status != http.StatusForbidden || strings.Contains(string(r.Body), "Stitch Slop") {
			t.Errorf("%s %s with Host %s = %d %s, want 403 forbidden_host", req.Method, req.Path, host, r.Status, r.Body)
		}
	}
}

func TestUpgradeWithForeignHostRefused(t *testing.T) {
	b := startBridge(t, nil)
	c, err := b.Dial("/", adaptertest.DialOptions{Origin: testOrigin, Host: "evil.example:" + itoa(b.Port())})
	if err == nil {
		c.Close()
		t.Fatal("DNS-rebinding Host accepted")
	}
	if c.Status() != 403 {
		t.Fatalf("status %d, want 403", c.Status())
	}
}

// §2.3 handshake and §2.4 pairing.

func TestTokenHandshakeMintsPairingAndSpendsToken(t *testing.T) {
	b := startBridge(t, nil)
	p, hello := b.attach(map[string]any{"token": testToken})
	if hello["protocol"] != float64(1) || hello["port"] != float64(b.Port()) {
		t.Fatalf("hello = %v", hello)
	}
	secret, _ := hello["pairingSecret"].(string)
	if len(secret) < 43 { // 32 bytes base64url
		t.Fatalf("pairingSecret %q has less than 32 bytes of entropy", secret)
	}
	if strings.ContainsAny(secret, "+/=") {
		t.Fatalf("pairingSecret %q is not URL-safe", secret)
	}
	dir := b.configDir()
	if m := adaptertest.FileMode(t, dir); m != 0o700 {
		t.Errorf("config dir mode %o, want 700", m)
	}
	path := filepath.Join(dir, "pairing.json")
	if m := adaptertest.FileMode(t, path); m != 0o600 {
		t.Errorf("pairing.json mode %o, want 600", m)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), testToken) || strings.Contains(string(raw), secret) {
		t.Fatalf("pairing.json holds a credential in the clear: %s", raw)
	}
	var pf pairingFile
	if err := json.Unmarshal(raw, &pf); err != nil {
		t.Fatal(err)
	}
	if pf.Origins[testOrigin] == nil || len(pf.Origins[testOrigin].Secrets) != 1 {
		t.Fatalf("pairing not stored under the origin: %s", raw)
	}
	if len(pf.SpentTokens) != 1 || pf.SpentTokens[0] != hub.HashSecret(testToken) {
		t.Fatalf("token not recorded as spent (hashed): %s", raw)
	}
	p.Close()
	b.waitConnected(false)

	// The spent token is refused from now on.
	p2 := b.dialPage(adaptertest.DialOptions{})
	p2.send(map[string]any{"token": testToken})
	if f := p2.next(); f["error"] != "bad_credential" {
		t.Fatalf("spent token answer = %v", f)
	}
	p2.expectClosed()

	// The minted secret authenticates, without a new pairing.
	p3, hello3 := b.attach(map[string]any{"secret": secret})
	if _, minted := hello3["pairingSecret"]; minted {
		t.Fatalf("secret handshake minted a pairing: %v", hello3)
	}
	p3.Close()
	_, refusals := b.run().refusals.snapshot()
	if len(refusals) != 1 || refusals[0].Reason != ReasonSpentToken {
		t.Fatalf("refusals = %+v, want one spent-token refusal", refusals)
	}
}

func TestHandshakeVariants(t *testing.T) {
	cases := []struct {
		name       string
		hs         func(secret string) any
		wantOK     bool
		wantMinted bool
		reason     string
	}{
		{"both verify is a secret handshake", func(s string) any { return map[string]any{"secret": s, "token": "tok_second"} }, true, false, ""},
		{"wrong secret, good token", func(string) any { return map[string]any{"secret": "nope", "token": "tok_second"} }, true, true, ""},
		{"good secret, unknown token", func(s string) any { return map[string]any{"secret": s, "token": "tok_unknown"} }, true, false, ""},
		{"wrong secret only", func(string) any { return map[string]any{"secret": "x"} }, false, false, ReasonWrongPair},
		{"very long wrong secret", func(string) any { return map[string]any{"secret": strings.Repeat("z", 1000)} }, false, false, ReasonWrongPair},
		{"unknown token", func(string) any { return map[string]any{"token": "tok_other"} }, false, false, ReasonUnknownTok},
		{"neither", func(string) any { return map[string]any{"hello": 1} }, false, false, ReasonNoCred},
		{"token not a string", func(string) any { return map[string]any{"token": 5} }, false, false, ReasonBadFrame},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := startBridge(t, nil)
			_, hello := b.attach(map[string]any{"token": testToken})
			secret := hello["pairingSecret"].(string)
			cur := b.run().currentPage()
			cur.ws.Drop() // free the slot
			b.waitConnected(false)
			if err := b.S.ArmToken("tok_second"); err != nil {
				t.Fatal(err)
			}
			p := b.dialPage(adaptertest.DialOptions{})
			p.send(tc.hs(secret))
			f := p.next()
			if !tc.wantOK {
				if f["error"] != "bad_credential" {
					t.Fatalf("answer %v, want bad_credential", f)
				}
				if msg, _ := f["message"].(string); msg == "" {
					t.Fatal("refusal without a message")
				}
				p.expectClosed()
				_, refusals := b.run().refusals.snapshot()
				if len(refusals) == 0 || refusals[0].Reason != tc.reason {
					t.Fatalf("refusals %+v, want reason %q", refusals, tc.reason)
				}
				return
			}
			if f["hello"] != ServerName {
				t.Fatalf("answer %v, want hello", f)
			}
			_, minted := f["pairingSecret"]
			if minted != tc.wantMinted {
				t.Fatalf("pairingSecret minted = %v, want %v (%v)", minted, tc.wantMinted, f)
			}
			// A token is armed until it pairs: only a token handshake spends it.
			if armed := b.S.Report().TokenArmed; armed == tc.wantMinted {
				t.Fatalf("token armed after handshake = %v", armed)
			}
		})
	}
}

func TestHandshakeBadFrames(t *testing.T) {
	cases := []struct {
		name string
		send func(p *page)
	}{
		{"malformed JSON", func(p *page) { p.SendText("{not json") }},
		{"JSON array", func(p *page) { p.SendText(`["token"]`) }},
		{"binary frame", func(p *page) { p.SendBinary([]byte(`{"token":"` + testToken + `"}`)) }},
		{"oversized first frame", func(p *page) {
			p.SendText(`{"token":"` + testToken + `","pad":"` + strings.Repeat("a", MaxFirstFrame) + `"}`)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := startBridge(t, nil)
			p := b.dialPage(adaptertest.DialOptions{})
			tc.send(p)
			if f := p.next(); f["error"] != "bad_credential" {
				t.Fatalf("answer %v, want bad_credential", f)
			}
			p.expectClosed()
			if b.S.Report().TokenArmed != true {
				t.Fatal("a refused frame spent the token")
			}
		})
	}
}

func TestAuthTimeout(t *testing.T) {
	b := startBridge(t, func(o *Config) { o.AuthTimeout = 50 * time.Millisecond })
	p := b.dialPage(adaptertest.DialOptions{})
	if f := p.next(); f["error"] != "auth_timeout" {
		t.Fatalf("answer %v, want auth_timeout", f)
	}
	p.expectClosed()
}

func TestPairingsKeyedByOrigin(t *testing.T) {
	home := t.TempDir()
	store := &pairingStore{dir: home}
	if err := store.Redeem("https://staging.example", "tok_a", "secret-a"); err != nil {
		t.Fatal(err)
	}
	if store.Verify("https://prod.example", "secret-a") {
		t.Fatal("a staging secret authenticated production")
	}
	if !store.Verify("https://staging.example", "secret-a") {
		t.Fatal("staging secret not stored")
	}
	if store.Paired("https://prod.example") || !store.Paired("https://staging.example") {
		t.Fatal("Paired wrong")
	}
}

// §2.5 frames after the handshake.

func TestCallRoundTripAndToolList(t *testing.T) {
	b := startBridge(t, nil)
	p, _ := b.attach(map[string]any{"token": testToken})
	p.send(map[string]any{"tools": []any{map[string]any{"name": "scene.describe", "description": "d"}}})
	adaptertest.WaitFor(t, "one page tool", func() bool { tools, _ := b.S.Tools(); return len(tools) == 1 })
	// Revised list replaces the first.
	p.send(map[string]any{"tools": []any{map[string]any{"name": "scene.describe"}, map[string]any{"name": "render"}}})
	adaptertest.WaitFor(t, "two page tools", func() bool { tools, _ := b.S.Tools(); return len(tools) == 2 })

	var got map[string]any
	p.serve(func(cmd string, args map[string]any) map[string]any {
		got = map[string]any{"command": cmd, "args": args}
		return map[string]any{"ok": true, "objects": 3}
	})
	r := b.control("POST", "/call", `{"command":"scene.describe","args":{"limit":5}}`)
	env := mustJSON(t, r.Body)
	if env["ok"] != true || env["objects"] != float64(3) {
		t.Fatalf("envelope %s", r.Body)
	}
	if got["command"] != "scene.describe" || got["args"].(map[string]any)["limit"] != float64(5) {
		t.Fatalf("page saw %v", got)
	}
}

func TestPageFrameJunkIsIgnored(t *testing.T) {
	b := startBridge(t, nil)
	p, _ := b.attach(map[string]any{"token": testToken})
	p.SendText("{broken")
	p.SendText(`[1,2]`)
	p.SendBinary([]byte{0, 1, 2})
	p.SendText(`{"id":999,"ok":true}`)
	p.SendText(`{"id":"x","ok":true}`)
	p.SendText(`{"tools":"not a list"}`)
	p.serve(func(string, map[string]any) map[string]any { return map[string]any{"ok": true} })
	r := b.control("POST", "/call", `{"command":"scene.describe"}`)
	if env := mustJSON(t, r.Body); env["ok"] != true {
		t.Fatalf("bridge unusable after junk frames: %s", r.Body)
	}
}

// §2.6 two tabs.

func TestSecondTabRefusedBusyWhileFirstReachable(t *testing.T) {
	b := startBridge(t, nil)
	_, hello := b.attach(map[string]any{"token": testToken})
	first := b.run().currentPage()
	p2 := b.dialPage(adaptertest.DialOptions{})
	p2.send(map[string]any{"secret": hello["pairingSecret"]})
	f := p2.next()
	if f["error"] != "busy" || f["busy"] != true {
		t.Fatalf("second tab answer %v, want busy", f)
	}
	p2.expectClosed()
	if b.run().currentPage() != first {
		t.Fatal("the bridge switched to the second tab")
	}
}

func TestStaleTabDisplaced(t *testing.T) {
	b := startBridge(t, nil)
	p1 := b.dialPage(adaptertest.DialOptions{NoPong: true}) // asleep: answers no ping
	p1.send(map[string]any{"token": testToken})
	hello := p1.next()
	b.waitConnected(true)
	p2 := b.dialPage(adaptertest.DialOptions{})
	p2.send(map[string]any{"secret": hello["pairingSecret"]})
	if f := p2.next(); f["hello"] != ServerName {
		t.Fatalf("second tab answer %v, want hello (takeover)", f)
	}
	var displaced map[string]any
	for {
		f := p1.next()
		if f["displaced"] == true {
			displaced = f
			break
		}
	}
	if msg, _ := displaced["message"].(string); msg == "" {
		t.Fatal("displaced without a message")
	}
	p1.expectClosed()
}

// §2.9 heartbeat, and the pending-call failure path.

func TestHeartbeatDeadPageDropsToolsAndFailsPending(t *testing.T) {
	b := startBridge(t, nil, adaptertest.Options{Heartbeat: ws.HeartbeatConfig{Interval: 20 * time.Millisecond, DeadAfter: 150 * time.Millisecond}})
	p := b.dialPage(adaptertest.DialOptions{NoPong: true})
	p.send(map[string]any{"token": testToken})
	p.next()
	p.send(map[string]any{"tools": []any{map[string]any{"name": "render"}}})
	adaptertest.WaitFor(t, "one page tool", func() bool { tools, _ := b.S.Tools(); return len(tools) == 1 })
	r := b.control("POST", "/call", `{"command":"render"}`) // the page never answers
	env := mustJSON(t, r.Body)
	if env["ok"] != false || !strings.Contains(env["message"].(string), "may or may not have run") {
		t.Fatalf("pending call on a dead page = %s", r.Body)
	}
	b.waitConnected(false)
	if tools, _ := b.S.Tools(); len(tools) != 0 {
		t.Fatal("tools kept after the page died")
	}
	if p.Pings() == 0 {
		t.Fatal("no ping was sent")
	}
	p.expectClosed()
}

// A real client's automatic pongs keep the page over a real socket. The
// dead-after window is wide (50 pings) so a scheduler stall on a loaded
// machine under -race cannot pass for silence; the exact 30 s/90 s
// timings are asserted deterministically in TestHeartbeatPongKeepsPage.
func TestHeartbeatLivePageStays(t *testing.T) {
	const interval, deadAfter = 10 * time.Millisecond, 500 * time.Millisecond
	b := startBridge(t, nil, adaptertest.Options{Heartbeat: ws.HeartbeatConfig{Interval: interval, DeadAfter: deadAfter}})
	p, _ := b.attach(map[string]any{"token": testToken})
	time.Sleep(2 * deadAfter) // twice the silence that would drop it
	if !b.S.attached() {
		t.Fatal("a page answering pings was dropped")
	}
	if p.Pings() < 3 {
		t.Fatalf("pings = %d, want several", p.Pings())
	}
}

func TestCallTimeoutAndDisconnectMidCall(t *testing.T) {
	b := startBridge(t, func(o *Config) { o.CallTimeout = 100 * time.Millisecond })
	p, _ := b.attach(map[string]any{"token": testToken})
	r := b.control("POST", "/call", `{"command":"slow"}`)
	env := mustJSON(t, r.Body)
	if env["ok"] != false || !strings.Contains(env["message"].(string), "describe the scene") {
		t.Fatalf("timed-out call = %s", r.Body)
	}
	// A late reply for the timed-out id is ignored.
	p.SendText(`{"id":1,"ok":true}`)

	done := make(chan map[string]any, 1)
	b.S.callTimeout.Store(int64(5 * time.Second))
	go func() {
		out, _ := b.S.Call(t.Context(), "slow", nil)
		var m map[string]any
		json.Unmarshal(out, &m)
		done <- m
	}()
	p.next() // the command frame
	p.next() // the second command frame (id 2)
	p.Close()
	select {
	case m := <-done:
		if m["ok"] != false || !strings.Contains(m["message"].(string), "may or may not have run") {
			t.Fatalf("call during disconnect = %v", m)
		}
	case <-time.After(frameWait):
		t.Fatal("a call pending on a closed page never failed")
	}
}
