package stitchslop

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// Issue 28: pair takes the token (and the tab's site) as arguments and
// arms it; the tab pairs with it, and the greeting says it attached with
// the token, now spent; next time it says the stored pairing.
func TestMCPPairThenGreetingSaysHow(t *testing.T) {
	b := startBridge(t, func(o *Config) { o.Token = "" })
	c := connectSDK(t, b)
	if res, text := callText(t, c, "pair", map[string]any{}); !res.IsError || !strings.Contains(text, "needs token") {
		t.Fatalf("pair without a token: %q", text)
	}
	if res, text := callText(t, c, "pair", map[string]any{"token": "tok_from_panel"}); res.IsError || !strings.Contains(text, "Armed a one-time token for "+testOrigin) {
		t.Fatalf("pair: %q", text)
	}
	p, hello := b.attach(map[string]any{"token": "tok_from_panel"})
	p.serve(answerScene)
	if _, text := callText(t, c, "wait_for_connection", map[string]any{"timeoutSeconds": 1}); !strings.Contains(text, "with the one-time token (now spent") {
		t.Fatalf("greeting after a token: %q", text)
	}
	if res, text := callText(t, c, "pair", map[string]any{"token": "tok_from_panel"}); !res.IsError || !strings.Contains(text, "redeemed already") {
		t.Fatalf("pair with a spent token: %q", text)
	}
	if res, text := callText(t, c, "pair", map[string]any{"token": "t", "origin": "https://evil.example"}); !res.IsError || !strings.Contains(text, "is ever admitted") {
		t.Fatalf("pair for a site never admitted: %q", text)
	}
	p.Close()
	b.waitConnected(false)
	p2 := b.dialPage(adaptertest.DialOptions{})
	p2.send(map[string]any{"secret": hello["pairingSecret"]})
	p2.next()
	b.waitConnected(true)
	p2.serve(answerScene)
	if _, text := callText(t, c, "wait_for_connection", map[string]any{"timeoutSeconds": 1}); !strings.Contains(text, "with its stored pairing") {
		t.Fatalf("greeting after a pairing: %q", text)
	}
}

// pair through a face of a bridge in another process arms the token
// there (its keyed POST /pair), for the site given.
func TestFacePairArmsTheFollowedBridge(t *testing.T) {
	leader := startBridge(t, func(o *Config) { o.Token = "" })
	_, c := mountClient(t, leader)
	text, isErr := c.text(t, "stitchslop_pair", map[string]any{"token": "tok_dev", "origin": "http://localhost:5173"})
	if isErr || !strings.Contains(text, "http://localhost:5173") {
		t.Fatalf("pair: %q", text)
	}
	if got := leader.S.armedFor("http://localhost:5173"); got != "tok_dev" {
		t.Fatalf("armed on the leader: %q", got)
	}
	if got := leader.handshakeFrom(t, "http://localhost:5173", map[string]any{"token": "tok_dev"}); got != "hello" {
		t.Fatalf("the dev tab: %s", got)
	}
}

// connection_status says what the bridge sees: mode, attachment, sites,
// refusals with a fix each, other agents on the same tab.
func TestMCPConnectionStatus(t *testing.T) {
	b := startBridge(t, nil)
	c := connectSDK(t, b)
	if _, err := b.Dial("/", adaptertest.DialOptions{Origin: "https://evil.example"}); err == nil {
		t.Fatal("foreign origin upgraded")
	}
	p, _ := b.attach(map[string]any{"token": testToken})
	p.serve(answerScene)
	p.send(map[string]any{"tools": []any{map[string]any{"name": "wait_for_connection"}, map[string]any{"name": "render"}}})
	adaptertest.WaitFor(t, "the tools", func() bool { tl, _ := b.S.Tools(); return len(tl) == 1 })
	b.Do(adaptertest.Request{Method: "POST", Path: "/call", Body: []byte(`{"command":"scene.describe"}`),
		Header: map[string][]string{KeyHeader: {b.S.Key()}, AgentHeader: {"another-agent"}}})
	callText(t, c, "scene.describe", map[string]any{}) // this face drives too
	_, text := callText(t, c, "connection_status", map[string]any{})
	summary, body, _ := strings.Cut(text, "\n")
	var st struct {
		Mode         string        `json:"mode"`
		Attached     bool          `json:"attached"`
		Port         int           `json:"port"`
		PageOrigin   string        `json:"pageOrigin"`
		AttachedWith string        `json:"attachedWith"`
		PairedSites  []string      `json:"pairedSites"`
		Attempts     int           `json:"attempts"`
		Refusals     []Refusal     `json:"refusals"`
		DroppedTools []DroppedTool `json:"droppedTools"`
		OtherAgents  []AgentReport `json:"otherAgents"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	if st.Mode != "bridge" || !st.Attached || st.Port != b.Port() || st.PageOrigin != testOrigin || st.AttachedWith != "token" ||
		len(st.PairedSites) != 1 || st.Attempts != 2 || len(st.Refusals) != 1 || st.Refusals[0].Reason != ReasonOrigin || st.Refusals[0].Fix == "" ||
		len(st.DroppedTools) != 1 {
		t.Fatalf("connection_status = %+v", st)
	}
	if len(st.OtherAgents) != 1 || st.OtherAgents[0].ID != "another-agent" || !strings.Contains(summary, "Other agents drive the same tab: another-agent") {
		t.Fatalf("other agents %+v; summary %q", st.OtherAgents, summary)
	}
}

// A wait that times out with no attempt at all says so, and what it can
// be: the switch, the browser, or another bridge (named by port).
func TestMCPWaitTimeoutNoAttempt(t *testing.T) {
	shared := t.TempDir()
	b := startBridge(t, func(o *Config) { o.ConfigDir = shared })
	other := startBridge(t, func(o *Config) { o.ConfigDir = shared })
	c := connectSDK(t, b)
	_, text := callText(t, c, "wait_for_connection", map[string]any{"timeoutSeconds": 0.05})
	for _, want := range []string{"No browser has tried to connect", "Allow agent connections switch", "Content-Security-Policy", "another bridge running for it (port " + itoa(other.Port()) + ")"} {
		if !strings.Contains(text, want) {
			t.Fatalf("timeout with no attempt lacks %q: %q", want, text)
		}
	}
}
