package stitchslop

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// faceClient wraps adaptertest.MCPClient with test failures.
type faceClient struct {
	t *testing.T
	*adaptertest.MCPClient
}

func (c faceClient) initialize() {
	c.t.Helper()
	if _, err := c.Initialize("2025-06-18", 2*frameWait); err != nil {
		c.t.Fatal(err)
	}
}

func (c faceClient) call(method string, params any) map[string]any {
	c.t.Helper()
	res, err := c.Result(method, params, 2*frameWait)
	if err != nil {
		c.t.Fatal(err)
	}
	return res
}

// tool calls a tool and returns its first text block and isError.
func (c faceClient) tool(name string, args any) (string, bool) {
	c.t.Helper()
	res, err := c.Tool(name, args, 2*frameWait)
	if err != nil {
		c.t.Fatal(err)
	}
	return res.Text, res.IsError
}

func (c faceClient) toolNames() string {
	c.t.Helper()
	names, err := c.ToolNames(2 * frameWait)
	if err != nil {
		c.t.Fatal(err)
	}
	return names
}

func (c faceClient) expectNote(method string) {
	c.t.Helper()
	if _, err := c.Note(method, 2*frameWait); err != nil {
		c.t.Fatal(err)
	}
}

// dialSecret attaches a page with a stored pairing secret, retrying while
// nothing listens on port yet.
func dialSecret(t *testing.T, port int, secret string) *page {
	t.Helper()
	deadline := time.Now().Add(2 * frameWait)
	for {
		c, err := adaptertest.Dial(fmt.Sprintf("ws://127.0.0.1:%d/", port), adaptertest.DialOptions{Origin: testOrigin})
		if err == nil {
			p := &page{t: t, WSClient: c}
			t.Cleanup(c.Close)
			p.send(map[string]any{"secret": secret})
			if hello := p.next(); hello["hello"] == ServerName {
				return p
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("no bridge took the page on port %d: %v", port, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func answerScene(cmd string, _ map[string]any) map[string]any {
	if cmd == "render" {
		return map[string]any{"ok": true, "dataUrl": "data:image/png;base64,UE5HREFUQQo="}
	}
	return map[string]any{"ok": true, "say": "Two objects on the hoop.", "command": cmd}
}

// A second `hub stitchslop` for an origin a live bridge already serves is
// a face of that bridge: the page's tools and its own, calls to the same
// tab, list_changed as the page changes. When that bridge stops, the face
// takes over its port and the tab comes back to it with its pairing.
func TestFollowerFacesTheLiveBridgeAndTakesOver(t *testing.T) {
	leader := startBridge(t, nil)
	port := leader.Port()
	p, hello := leader.attach(map[string]any{"token": testToken})
	secret := hello["pairingSecret"].(string)
	p.serve(answerScene)
	p.send(map[string]any{"tools": []any{map[string]any{"name": "scene.describe"}, map[string]any{"name": "render"}}})
	adaptertest.WaitFor(t, "the tools", func() bool { tl, _ := leader.S.Tools(); return len(tl) == 2 })

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr adaptertest.SyncBuffer
	done := make(chan struct{})
	var exitErr error
	go func() {
		exitErr = RunStandalone(t.Context(), StandaloneOptions{Origin: testOrigin, Stdin: inR, Stdout: outW, Stderr: &stderr})
		outW.Close()
		close(done)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(2 * frameWait):
			t.Error("the face did not exit")
		}
		t.Logf("face stderr:\n%s", stderr.String())
	})
	c := faceClient{t, adaptertest.NewMCPClient(inW, outR)}
	c.initialize()

	if got := c.toolNames(); got != ownTools+",scene.describe,render" {
		t.Fatalf("tools/list = %s", got)
	}
	if text, isErr := c.tool("scene.describe", map[string]any{}); isErr || !strings.HasPrefix(text, "Two objects on the hoop.\n") {
		t.Fatalf("scene.describe through the face = %q %v", text, isErr)
	}
	// Images come back as image blocks, as in standalone mode.
	res := c.call("tools/call", map[string]any{"name": "render", "arguments": map[string]any{}})
	if img := res["content"].([]any)[1].(map[string]any); img["type"] != "image" || img["data"] != "UE5HREFUQQo=" || img["mimeType"] != "image/png" {
		t.Fatalf("render = %v", res)
	}
	if text, _ := c.tool("wait_for_connection", map[string]any{"timeoutSeconds": 1}); !strings.Contains(text, "Already connected") ||
		!strings.Contains(text, "This is an MCP face of the Stitch Slop bridge on port") {
		t.Fatalf("wait_for_connection while following = %s", text)
	}
	adaptertest.WaitFor(t, "the leader to count the face", func() bool { return leader.S.Status().AgentSessions == 1 })
	if _, err := os.Stat(sessionPath(leader.configDir(), port)); err != nil {
		t.Fatal(err)
	}

	c.DropNotes()
	p.send(map[string]any{"tools": []any{map[string]any{"name": "render"}}})
	c.expectNote("notifications/tools/list_changed")
	adaptertest.WaitFor(t, "the revised list", func() bool { return c.toolNames() == ownTools+",render" })

	// The leader stops: the face takes over its port and the tab returns.
	c.DropNotes()
	leader.Stop()
	c.expectNote("notifications/tools/list_changed")
	p2 := dialSecret(t, port, secret)
	p2.serve(answerScene)
	p2.send(map[string]any{"tools": []any{map[string]any{"name": "scene.describe"}}})
	adaptertest.WaitFor(t, "the tab's tools on the face's own bridge", func() bool {
		return c.toolNames() == ownTools+",scene.describe"
	})
	if text, isErr := c.tool("scene.describe", map[string]any{}); isErr || !strings.HasPrefix(text, "Two objects") {
		t.Fatalf("scene.describe after the takeover = %q %v", text, isErr)
	}
	if text, _ := c.tool("wait_for_connection", map[string]any{"timeoutSeconds": 1}); !strings.Contains(text, "Already connected") || !strings.Contains(text, "this face took over") {
		t.Fatalf("wait_for_connection after the takeover = %s", text)
	}

	// The agent goes: the face ends, and with it the bridge it took over.
	inW.Close()
	select {
	case <-done:
		if exitErr != nil {
			t.Fatalf("exit: %v", exitErr)
		}
	case <-time.After(2 * frameWait):
		t.Fatal("the face did not exit when stdin closed")
	}
	if _, err := os.Stat(sessionPath(leader.configDir(), port)); !os.IsNotExist(err) {
		t.Fatalf("the taken-over bridge left its session file: %v", err)
	}
	if err := c.CheckOutput(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"following it as an MCP face", "taking over", "took over"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
}

// Before initialize a face has nobody to serve: stdin closing ends it, and
// the bridge it followed carries on. A token it was given is armed there.
func TestFollowerWithoutClientExits(t *testing.T) {
	leader := startBridge(t, func(o *Config) { o.Token = "" })
	var stderr adaptertest.SyncBuffer
	err := RunStandalone(t.Context(), StandaloneOptions{Origin: testOrigin, Token: "tok_for_the_leader",
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr})
	if err != nil || !strings.Contains(stderr.String(), "before any MCP initialize") {
		t.Fatalf("err = %v\n%s", err, stderr.String())
	}
	// Started in the background for a second tab (§2.6, §5 "start another
	// bridge"), it must say how to get one: a face is not a bridge.
	if !strings.Contains(stderr.String(), "--port") {
		t.Errorf("stderr does not say how to start a second bridge:\n%s", stderr.String())
	}
	if st := leader.control("GET", "/status", ""); st.Status != 200 {
		t.Fatalf("the followed bridge stopped: %d", st.Status)
	}
	if !leader.S.Report().TokenArmed {
		t.Fatalf("the token was not armed on the followed bridge:\n%s", stderr.String())
	}
}

// A face stopped by a signal after initialize must not blame the client
// for closing stdin (it did not).
func TestFollowerSignalAfterInitializeSaysSo(t *testing.T) {
	startBridge(t, nil)
	var stderr adaptertest.SyncBuffer
	var stdout adaptertest.SyncBuffer
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- RunStandalone(ctx, StandaloneOptions{Origin: testOrigin, Stdin: inR, Stdout: &stdout, Stderr: &stderr})
	}()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`+"\n")
	adaptertest.WaitFor(t, "the initialize answer", func() bool { return strings.Contains(stdout.String(), `"id":1`) })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if e := stderr.String(); strings.Contains(e, "closed stdin") {
		t.Fatalf("stderr gives the wrong reason:\n%s", e)
	}
}

// Issue 28: a face follows a live bridge by default, and ownBridge: true
// is the plugin's way out for a second tab. The face stops following,
// runs a bridge of its own on the next free port, and a second tab that
// attaches there is the one its calls reach; the first tab keeps the
// first bridge.
func TestFollowerOwnBridgeForASecondTab(t *testing.T) {
	ownBridgePorts = []int{0}
	t.Cleanup(func() { ownBridgePorts = DefaultPorts })
	leader := startBridge(t, nil)
	p1, hello := leader.attach(map[string]any{"token": testToken})
	secret := hello["pairingSecret"].(string)
	p1.serve(func(cmd string, _ map[string]any) map[string]any { return map[string]any{"ok": true, "tab": "first"} })

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr adaptertest.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- RunStandalone(t.Context(), StandaloneOptions{Origin: testOrigin, Stdin: inR, Stdout: outW, Stderr: &stderr})
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		<-done
		t.Logf("face stderr:\n%s", stderr.String())
	})
	c := faceClient{t, adaptertest.NewMCPClient(inW, outR)}
	c.initialize()
	if text, _ := c.tool("tab.which", map[string]any{}); !strings.Contains(text, `"tab":"first"`) {
		t.Fatalf("following: %s", text)
	}

	waited := make(chan string, 1)
	go func() {
		res, err := c.Tool("wait_for_connection", map[string]any{"ownBridge": true, "timeoutSeconds": 10}, 4*frameWait)
		if err != nil {
			t.Error(err)
		}
		waited <- res.Text
	}()
	var own int
	adaptertest.WaitFor(t, "the face's own bridge", func() bool {
		for _, sf := range scanSessions(leader.configDir()).Live {
			if sf.Port != leader.Port() {
				own = sf.Port
				return true
			}
		}
		return false
	})
	p2 := dialSecret(t, own, secret) // the second tab, same browser: its pairing works here too
	p2.serve(func(cmd string, _ map[string]any) map[string]any { return map[string]any{"ok": true, "tab": "second"} })
	text := <-waited
	// The second tab may attach before the wait first looks: "Already connected".
	attached := strings.HasPrefix(text, "Connected") || strings.HasPrefix(text, "Already connected")
	if !attached || !strings.Contains(text, "runs its own on port "+itoa(own)) {
		t.Fatalf("wait_for_connection ownBridge = %s", text)
	}
	if text, _ := c.tool("tab.which", map[string]any{}); !strings.Contains(text, `"tab":"second"`) {
		t.Fatalf("after ownBridge the face's calls reach %s", text)
	}
	if !leader.S.attached() {
		t.Fatal("the first tab lost its bridge")
	}
	if text, _ := c.tool("wait_for_connection", map[string]any{"ownBridge": true, "timeoutSeconds": 1}); !strings.Contains(text, "Already connected") {
		t.Fatalf("ownBridge again = %s", text)
	}
}

// --port always runs a bridge of its own on that port: it never follows
// the bridge that holds it (it says the port is taken), and beside a
// bridge on another port it runs its own.
func TestStandalonePortRunsItsOwnBridge(t *testing.T) {
	leader := startBridge(t, nil)
	t.Setenv("HOME", leader.Dirs.Home)
	port := freePort(t)
	inR, inW := io.Pipe()
	var stderr adaptertest.SyncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- RunStandalone(ctx, StandaloneOptions{Origin: testOrigin, Port: port, Token: "tok_own", Stdin: inR, Stdout: io.Discard, Stderr: &stderr})
	}()
	t.Cleanup(func() { inW.Close() })
	adaptertest.WaitFor(t, "a bridge of its own on --port", func() bool {
		sf, err := readSession(sessionPath(leader.configDir(), port))
		return err == nil && sf.PID == os.Getpid()
	})
	if strings.Contains(stderr.String(), "following it as an MCP face") {
		t.Fatalf("--port followed the running bridge:\n%s", stderr.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	stderr.TakeLines()
	err := RunStandalone(t.Context(), StandaloneOptions{Origin: testOrigin, Port: leader.Port(), Token: "tok_own2",
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr})
	if err == nil || strings.Contains(stderr.String(), "following it as an MCP face") {
		t.Fatalf("--port of the running bridge: %v\n%s", err, stderr.String())
	}
}
