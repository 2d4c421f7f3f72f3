package stitchslop

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub/mcpserver"
)

// mountClient serves a Mount on a server shared as `hub mcp` shares it,
// following the bridge b, and connects an SDK client to it.
func mountClient(t *testing.T, b *bridge) (*Mount, *mcpServerClient) {
	t.Helper()
	srv := mcpserver.New(mcpserver.Options{Name: "hub", Version: "test"})
	m := NewMount(srv, "stitchslop_", adaptertest.Logger(t))
	ctx, cancel := context.WithCancel(context.Background())
	ran, followed := make(chan struct{}), make(chan struct{})
	go func() { defer close(ran); m.Run(ctx) }()
	r, err := OpenRemote(ctx, b.configDir(), b.Port())
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() { defer close(followed); m.Follow(ctx, r, "hub-mcp-test", func() { close(ready) }) }()
	<-ready
	c := serveSDK(t, srv)
	t.Cleanup(func() { cancel(); <-ran; <-followed; r.Close() })
	return m, c
}

type mcpServerClient struct {
	*mcp.ClientSession
}

// serveSDK serves srv on the SDK's in-memory transport and connects a
// client.
func serveSDK(t *testing.T, srv *mcpserver.Server) *mcpServerClient {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := st.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ctx, sdkConn{conn}) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); conn.Close(); cancel(); <-done })
	return &mcpServerClient{ClientSession: cs}
}

func (c *mcpServerClient) text(t *testing.T, name string, args any) (string, bool) {
	t.Helper()
	res, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// Issue 28 under `hub mcp`: the mount follows the hub's bridge, and
// ownBridge runs one of its own in this process for a second tab, as a
// standalone face does.
func TestMountOwnBridgeForASecondTab(t *testing.T) {
	ownBridgePorts = []int{0}
	t.Cleanup(func() { ownBridgePorts = DefaultPorts })
	leader := startBridge(t, nil)
	p1, hello := leader.attach(map[string]any{"token": testToken})
	secret := hello["pairingSecret"].(string)
	p1.serve(func(string, map[string]any) map[string]any { return map[string]any{"ok": true, "tab": "first"} })
	p1.send(map[string]any{"tools": []any{map[string]any{"name": "which"}}})
	adaptertest.WaitFor(t, "the first tab's tools", func() bool { tl, _ := leader.S.Tools(); return len(tl) == 1 })
	_, c := mountClient(t, leader)
	if text, _ := c.text(t, "stitchslop_which", map[string]any{}); !strings.Contains(text, `"tab":"first"`) {
		t.Fatalf("following: %s", text)
	}
	waited := make(chan string, 1)
	go func() {
		text, _ := c.text(t, "stitchslop_wait_for_connection", map[string]any{"ownBridge": true, "timeoutSeconds": 10})
		waited <- text
	}()
	var own int
	adaptertest.WaitFor(t, "the mount's own bridge", func() bool {
		for _, sf := range scanSessions(leader.configDir()).Live {
			if sf.Port != leader.Port() {
				own = sf.Port
				return true
			}
		}
		return false
	})
	p2 := dialSecret(t, own, secret)
	p2.serve(func(string, map[string]any) map[string]any { return map[string]any{"ok": true, "tab": "second"} })
	p2.send(map[string]any{"tools": []any{map[string]any{"name": "which"}}})
	if text := <-waited; !strings.Contains(text, "Connected") || !strings.Contains(text, "bridge of its own on port "+itoa(own)) {
		t.Fatalf("ownBridge = %s", text)
	}
	adaptertest.WaitFor(t, "the second tab's tools", func() bool {
		res, err := c.ListTools(t.Context(), nil)
		return err == nil && len(res.Tools) == len(bridgeTools)+1
	})
	if text, _ := c.text(t, "stitchslop_which", map[string]any{}); !strings.Contains(text, `"tab":"second"`) {
		t.Fatalf("after ownBridge the calls reach %s", text)
	}
}

// wait_for_connection with ownBridge: a tab can only attach to the bridge
// the call opens during the call, so however quickly it comes it is greeted
// as newly connected, never "Already connected".
func TestOwnBridgeGreetsAQuickTabAsConnected(t *testing.T) {
	b := startBridge(t, nil)
	own := func(context.Context) (bool, error) {
		p, _ := b.attach(map[string]any{"token": testToken})
		p.serve(func(string, map[string]any) map[string]any { return map[string]any{"ok": true} })
		p.send(map[string]any{"tools": []any{map[string]any{"name": "which"}}})
		adaptertest.WaitFor(t, "the tab's tools", func() bool { tl, _ := b.S.Tools(); return len(tl) == 1 })
		return true, nil
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); serveFace(ctx, b.S, st, nil, own) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	text, isErr := (&mcpServerClient{ClientSession: cs}).text(t, toolWait, map[string]any{"ownBridge": true, "timeoutSeconds": 5})
	if isErr || !strings.HasPrefix(text, "Connected: ") {
		t.Fatalf("wait_for_connection with ownBridge = %s", text)
	}
}
