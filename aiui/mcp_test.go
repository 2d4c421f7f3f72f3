package aiui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// teeTransport records every notification the client receives.
type teeTransport struct {
	inner mcp.Transport
	ch    chan *jsonrpc.Request
}

type teeConn struct {
	mcp.Connection
	ch chan *jsonrpc.Request
}

func (t *teeTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	return &teeConn{Connection: c, ch: t.ch}, err
}

func (c *teeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); ok && !r.IsCall() {
		select {
		case c.ch <- r:
		default:
		}
	}
	return m, err
}

func waitNote(t *testing.T, ch chan *jsonrpc.Request, method string) map[string]any {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case r := <-ch:
			if r.Method != method {
				continue
			}
			var p map[string]any
			json.Unmarshal(r.Params, &p)
			return p
		case <-deadline:
			t.Fatalf("no %s notification", method)
		}
	}
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

func TestMCPFaceInMemory(t *testing.T) {
	for _, version := range []string{"", "2025-06-18"} {
		t.Run("protocol="+version, func(t *testing.T) { testMCPFace(t, version) })
	}
}

func testMCPFace(t *testing.T, version string) {
	h, _ := start(t, func(c *Config, _ *Server) { c.DebounceMS = 20 })
	cl := control(t, h)
	ctx, cancel := context.WithCancel(context.Background())
	serverT, clientT := mcp.NewInMemoryTransports()
	var owned sync.WaitGroup
	owned.Add(1)
	done := make(chan error, 1)
	go func() {
		done <- RunFace(ctx, serverT, cl, FaceOptions{NotifyPageTools: true, CWD: "/repo", OnInitialized: owned.Done})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunFace: %v", err)
		}
	}()
	notes := make(chan *jsonrpc.Request, 64)
	// A handler makes a stateless client (version "", the SDK's newest)
	// open the subscriptions/listen stream list_changed comes on.
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"},
		&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}})
	cs, err := client.Connect(ctx, &teeTransport{inner: clientT, ch: notes}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	owned.Wait()

	caps := cs.InitializeResult().Capabilities
	if _, ok := caps.Experimental["claude/channel"]; !ok || caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("capabilities = %+v", caps)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "channel_info,channel_reload,page_tools_call,page_tools_list" {
		t.Fatalf("tools = %v", names)
	}
	adaptertest.WaitFor(t, "the face to attach", func() bool {
		return strings.Contains(string(h.Do(adaptertest.Request{Path: "/debug/api/info"}).Body), `"faces":1`)
	})

	// a prompt from /ws arrives as notifications/claude/channel
	ws := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, ws, helloFrame(t, "text-concat"))
	sendAck(t, ws, dataFrame(t, "th", true, `{"text":"make it amber"}`))
	p := waitNote(t, notes, MethodChannel)
	meta, _ := p["meta"].(map[string]any)
	if p["content"] != "make it amber" || meta["kind"] != "prompt" || meta["format"] != "text-concat" {
		t.Fatalf("channel notification = %v", p)
	}
	for k := range meta {
		for _, r := range k {
			if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				t.Fatalf("meta key %q is not an identifier", k)
			}
		}
	}

	// a page registers: list_changed and a kind page-tools push
	toolsPage(t, h, `{"v":1,"type":"register","ns":"morpho","hash":"h1","tools":[{"name":"zoom","description":"zoom in"}]}`,
		func(call map[string]any) string {
			return fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":true,"value":{"zoomed":true}}`, call["callId"])
		})
	pt := waitNote(t, notes, MethodChannel)
	if pt["content"] != "page tools changed: morpho/zoom" || pt["meta"].(map[string]any)["kind"] != "page-tools" {
		t.Fatalf("page-tools push = %v", pt)
	}
	waitNote(t, notes, MethodToolsListChanged)

	if txt, isErr := callText(t, cs, "page_tools_list", map[string]any{}); isErr || !strings.Contains(txt, `"ns": "morpho"`) {
		t.Fatalf("page_tools_list = %s", txt)
	}
	if txt, isErr := callText(t, cs, "page_tools_call", map[string]any{"name": "zoom", "args": map[string]any{"f": 2}}); isErr || txt != `{"zoomed":true}` {
		t.Fatalf("page_tools_call = %s %v", txt, isErr)
	}
	if txt, isErr := callText(t, cs, "page_tools_call", map[string]any{"name": "missing"}); !isErr || !strings.Contains(txt, "no page tool named") {
		t.Fatalf("page_tools_call missing = %s", txt)
	}
	if txt, isErr := callText(t, cs, "channel_info", map[string]any{}); isErr || !strings.Contains(txt, `"generation": 0`) {
		t.Fatalf("channel_info = %s", txt)
	}
	if txt, isErr := callText(t, cs, "channel_reload", map[string]any{}); isErr || !strings.Contains(txt, `"generation": 1`) || !strings.Contains(txt, `"reloaded": true`) {
		t.Fatalf("channel_reload = %s", txt)
	}
}

// HubTools serve the face's tools on a server of several bridges, through
// a Forwarder, with the backend looked up per call.
func TestHubTools(t *testing.T) {
	h, _ := start(t, nil)
	cl := control(t, h)
	toolsPage(t, h, `{"v":1,"type":"register","ns":"morpho","hash":"h1","tools":[{"name":"zoom","description":"zoom in"}]}`,
		func(call map[string]any) string {
			return fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":true,"value":{"args":%s}}`, call["callId"], mustJSON(call["args"]))
		})
	var backend error
	defs, call := HubTools(func() (*Client, error) { return cl, backend })
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "channel_info,page_tools_call,page_tools_list" {
		t.Fatalf("tools = %v", names)
	}
	cases := []struct {
		name, tool, args string
		down             error
		isError          bool
		want             string
	}{
		{"list", "page_tools_list", `{}`, nil, false, `"ns": "morpho"`},
		{"call", "page_tools_call", `{"name":"zoom","args":{"f":2}}`, nil, false, `{"args":{"f":2}}`},
		{"call without args", "page_tools_call", `{"name":"zoom"}`, nil, false, `{"args":`},
		{"call without a name", "page_tools_call", `{}`, nil, true, "needs"},
		{"info", "channel_info", `{}`, nil, false, `"generation"`},
		{"reload is not offered", "channel_reload", `{}`, nil, true, "no aiui tool"},
		{"backend down", "page_tools_list", `{}`, fmt.Errorf("adapters.aiui is disabled"), true, "adapters.aiui is disabled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			backend = tc.down
			res, err := call(t.Context(), tc.tool, json.RawMessage(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if res.IsError != tc.isError || !strings.Contains(text, tc.want) {
				t.Fatalf("%s = %q (isError %v), want %q", tc.tool, text, res.IsError, tc.want)
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	if v == nil {
		return "null"
	}
	return string(b)
}
