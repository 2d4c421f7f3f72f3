package stitchslop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// lineMCP drives an MCP face over newline-delimited pipes, as an MCP
// client does over a process's stdio: answers by id, notifications in
// order.
type lineMCP struct {
	t     *testing.T
	w     io.WriteCloser
	ids   atomic.Int64
	mu    sync.Mutex
	wait  map[int64]chan map[string]any
	notes chan map[string]any
}

func newLineMCP(t *testing.T, w io.WriteCloser, r io.Reader) *lineMCP {
	c := &lineMCP{t: t, w: w, wait: map[int64]chan map[string]any{}, notes: make(chan map[string]any, 256)}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Errorf("stdout carried a non-JSON-RPC line: %q", sc.Text())
				continue
			}
			if id, ok := m["id"].(float64); ok {
				c.mu.Lock()
				ch := c.wait[int64(id)]
				delete(c.wait, int64(id))
				c.mu.Unlock()
				if ch != nil {
					ch <- m
				}
				continue
			}
			c.notes <- m
		}
	}()
	return c
}

// call sends a request and returns its result (failing on an error).
func (c *lineMCP) call(method string, params any) map[string]any {
	c.t.Helper()
	id := c.ids.Add(1)
	ch := make(chan map[string]any, 1)
	c.mu.Lock()
	c.wait[id] = ch
	c.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	select {
	case m := <-ch:
		res, ok := m["result"].(map[string]any)
		if !ok {
			c.t.Fatalf("%s answered %v", method, m)
		}
		return res
	case <-time.After(2 * frameWait):
		c.t.Fatalf("no answer to %s", method)
		return nil
	}
}

func (c *lineMCP) initialize() {
	c.t.Helper()
	c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	c.w.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
}

// tool calls a tool and returns its first text block and isError.
func (c *lineMCP) tool(name string, args any) (string, bool) {
	c.t.Helper()
	res := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	content := res["content"].([]any)
	text, _ := content[0].(map[string]any)["text"].(string)
	return text, res["isError"] == true
}

func (c *lineMCP) toolNames() string {
	c.t.Helper()
	var names []string
	for _, tl := range c.call("tools/list", map[string]any{})["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	return strings.Join(names, ",")
}

// expectNote waits for a notification with method, skipping others.
func (c *lineMCP) expectNote(method string) {
	c.t.Helper()
	timeout := time.After(2 * frameWait)
	for {
		select {
		case m := <-c.notes:
			if m["method"] == method {
				return
			}
		case <-timeout:
			c.t.Fatalf("no %s", method)
		}
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
	c := newLineMCP(t, inW, outR)
	c.initialize()

	if got := c.toolNames(); got != "wait_for_connection,connection_status,pair,scene.describe,render" {
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
	if text, _ := c.tool("connection_status", map[string]any{}); !strings.Contains(text, `"mode": "following"`) || !strings.Contains(text, `"connected": true`) {
		t.Fatalf("connection_status = %s", text)
	}
	adaptertest.WaitFor(t, "the leader to count the face", func() bool { return leader.S.Status().AgentSessions == 1 })
	if _, err := os.Stat(sessionPath(leader.configDir(), port)); err != nil {
		t.Fatal(err)
	}

	p.send(map[string]any{"tools": []any{map[string]any{"name": "render"}}})
	c.expectNote("notifications/tools/list_changed")
	adaptertest.WaitFor(t, "the revised list", func() bool { return c.toolNames() == "wait_for_connection,connection_status,pair,render" })

	// The leader stops: the face takes over its port and the tab returns.
	leader.Stop()
	c.expectNote("notifications/tools/list_changed")
	p2 := dialSecret(t, port, secret)
	p2.serve(answerScene)
	p2.send(map[string]any{"tools": []any{map[string]any{"name": "scene.describe"}}})
	adaptertest.WaitFor(t, "the tab's tools on the face's own bridge", func() bool {
		return c.toolNames() == "wait_for_connection,connection_status,pair,scene.describe"
	})
	if text, isErr := c.tool("scene.describe", map[string]any{}); isErr || !strings.HasPrefix(text, "Two objects") {
		t.Fatalf("scene.describe after the takeover = %q %v", text, isErr)
	}
	if text, _ := c.tool("connection_status", map[string]any{}); !strings.Contains(text, `"mode": "took-over"`) || !strings.Contains(text, "took over") {
		t.Fatalf("connection_status after the takeover = %s", text)
	}
	if text, _ := c.tool("wait_for_connection", map[string]any{"timeoutSeconds": 1}); !strings.Contains(text, "Already connected") {
		t.Fatalf("wait_for_connection = %s", text)
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
	for _, want := range []string{"following it as an MCP face", "taking over", "took over"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
}

// Before initialize a face has nobody to serve: stdin closing ends it, and
// the bridge it followed carries on.
func TestFollowerWithoutClientExits(t *testing.T) {
	leader := startBridge(t, nil)
	var stderr adaptertest.SyncBuffer
	err := RunStandalone(t.Context(), StandaloneOptions{Origin: testOrigin, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr})
	if err != nil || !strings.Contains(stderr.String(), "before any MCP initialize") {
		t.Fatalf("err = %v\n%s", err, stderr.String())
	}
	if st := leader.control("GET", "/status", ""); st.Status != 200 {
		t.Fatalf("the followed bridge stopped: %d", st.Status)
	}
}
