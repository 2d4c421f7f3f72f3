package aiui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub/mcpserver"
)

// The directory's order (the active tab's entries first) is the tools'
// order; a name several pages hold gets a routed bare name plus one per
// namespace, and per connection where one namespace has several.
func TestPageRoutes(t *testing.T) {
	reg := func(client, ns string, active bool, names ...string) tools.Registration {
		r := tools.Registration{ClientID: client, NS: ns, URL: "http://localhost:5173/" + ns, ActiveTab: active}
		for _, n := range names {
			r.Tools = append(r.Tools, tools.Tool{Name: n, Description: n + " it"})
		}
		return r
	}
	cases := []struct {
		name   string
		regs   []tools.Registration
		want   string // key=ns:clientId of the route, in order
		inDesc map[string]string
	}{
		{"one page", []tools.Registration{reg("c1", "morpho", false, "zoom", "set.params")},
			"zoom=: set.params=:", map[string]string{"zoom": "zoom it (an aiui page's tool, ns morpho at http://localhost:5173/morpho;"}},
		{"the active tab's first", []tools.Registration{reg("c2", "aztec", true, "pan"), reg("c1", "morpho", false, "zoom")},
			"pan=: zoom=:", map[string]string{"pan": "the active tab"}},
		{"a shared name", []tools.Registration{reg("c1", "morpho", true, "zoom"), reg("c2", "aztec", false, "zoom")},
			"zoom=: morpho/zoom=morpho: aztec/zoom=aztec:", map[string]string{"zoom": "held by the pages of ns morpho, aztec"}},
		{"one namespace twice", []tools.Registration{reg("c1", "morpho", false, "zoom"), reg("c2", "morpho", false, "zoom")},
			"zoom=: morpho/zoom=morpho: morpho/zoom@c1=morpho:c1 morpho/zoom@c2=morpho:c2", nil},
		{"no pages", nil, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defs, routes := pageRoutes(tc.regs)
			var got []string
			for _, d := range defs {
				r := routes[d.Name]
				got = append(got, d.Name+"="+r.NS+":"+r.ClientID)
				if r.Name == "" || !strings.HasSuffix(strings.SplitN(d.Name, "@", 2)[0], r.Name) {
					t.Errorf("%s routes to tool %q", d.Name, r.Name)
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Fatalf("routes = %q, want %q", strings.Join(got, " "), tc.want)
			}
			for _, d := range defs {
				if want, ok := tc.inDesc[d.Name]; ok && !strings.Contains(d.Description, want) {
					t.Errorf("%s description %q lacks %q", d.Name, d.Description, want)
				}
			}
		})
	}
	// However many a page declares, a bounded number get a name.
	var many []string
	for i := range MaxNamedPageTools + 10 {
		many = append(many, fmt.Sprintf("t%d", i))
	}
	if defs, _ := pageRoutes([]tools.Registration{reg("c1", "big", false, many...)}); len(defs) != MaxNamedPageTools {
		t.Fatalf("%d page tools named, want %d", len(defs), MaxNamedPageTools)
	}
}

// The aiui part of `hub mcp` registers each page tool as its own MCP
// tool under aiui_, in step with the directory (list_changed as pages
// come and go), and a call of one reaches its page; with no page, the
// answer says what the person does.
func TestHubFacePageTools(t *testing.T) {
	h, _ := start(t, func(c *Config, _ *Server) { c.DebounceMS = 20 })
	srv := mcpserver.New(mcpserver.Options{Name: "hub"})
	face := newHubFace(adapters.FaceEnv{Server: srv, Dirs: h.Dirs, FaceID: "test", CWD: "/repo"})
	ctx, cancel := context.WithCancel(context.Background())
	followed := make(chan error, 1)
	attached := make(chan struct{})
	go func() { followed <- face.Follow(ctx, adapters.Status{}, func() { close(attached) }) }()
	serverT, clientT := mcp.NewInMemoryTransports()
	served := make(chan struct{})
	go func() { srv.Serve(ctx, serverT); close(served) }()
	defer func() {
		cancel()
		<-followed
		<-served
	}()
	notes := make(chan *jsonrpc.Request, 64)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &teeTransport{inner: clientT, ch: notes}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	<-attached
	names := func() string {
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range lt.Tools {
			out = append(out, tool.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(); got != "channel_info,page_tools_call,page_tools_list" {
		t.Fatalf("tools with no page = %s", got)
	}
	// No page: the answer names what to do, and where.
	if txt, isErr := callText(t, cs, "page_tools_call", map[string]any{"name": "zoom"}); !isErr ||
		!strings.Contains(txt, tools.NoPageMsg) || !strings.Contains(txt, "aiui dev overlay") || !strings.Contains(txt, h.URL("/tools")) {
		t.Fatalf("page_tools_call with no page = %s (isError %v)", txt, isErr)
	}

	echo := func(call map[string]any) string {
		return fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":true,"value":{"ns":%q,"args":%s}}`, call["callId"], call["ns"], mustJSON(call["args"]))
	}
	page := toolsPage(t, h, `{"v":1,"type":"register","ns":"morpho","hash":"h1","url":"http://localhost:5173/",`+
		`"tools":[{"name":"set.params","description":"set the sim parameters","inputSchema":{"type":"object","properties":{"f":{"type":"number"}}}}]}`, echo)
	waitNote(t, notes, MethodToolsListChanged)
	adaptertest.WaitFor(t, "the page's tool by name", func() bool {
		return names() == "channel_info,page_tools_call,page_tools_list,aiui_set_params"
	})
	lt, _ := cs.ListTools(ctx, nil)
	desc := lt.Tools[3].Description
	for _, want := range []string{"set the sim parameters", `(page tool "set.params")`, "ns morpho"} {
		if !strings.Contains(desc, want) {
			t.Errorf("aiui_set_params description %q lacks %q", desc, want)
		}
	}
	if schema, _ := json.Marshal(lt.Tools[3].InputSchema); !strings.Contains(string(schema), `"f"`) {
		t.Errorf("aiui_set_params schema = %s", schema)
	}
	if txt, isErr := callText(t, cs, "aiui_set_params", map[string]any{"f": 2}); isErr || txt != `{"ns":"morpho","args":{"f":2}}` {
		t.Fatalf("aiui_set_params = %s (isError %v)", txt, isErr)
	}
	if got := face.Tools(); strings.Join(got, ",") != "aiui_set_params,channel_info,page_tools_call,page_tools_list" {
		t.Fatalf("Tools() = %v", got)
	}

	// The page goes: list_changed, and its tool with it.
	page.Close()
	waitNote(t, notes, MethodToolsListChanged)
	adaptertest.WaitFor(t, "the page's tool to go", func() bool { return names() == "channel_info,page_tools_call,page_tools_list" })
	if hint, ok := face.Unknown("aiui_set_params"); !ok || !strings.Contains(hint, "page_tools_call") {
		t.Fatalf("Unknown(aiui_set_params) = %q %v", hint, ok)
	}

	// Absent withdraws them all.
	toolsPage(t, h, `{"v":1,"type":"register","ns":"aztec","hash":"h2","tools":[{"name":"pan","description":"pan"}]}`, echo)
	adaptertest.WaitFor(t, "the second page's tool", func() bool { return strings.HasSuffix(names(), ",aiui_pan") })
	face.Absent("adapters.aiui is disabled")
	if got := names(); got != "" {
		t.Fatalf("tools after Absent = %s", got)
	}
}

// Whatever names and namespaces pages declare, the named tools stay
// bounded, every route calls a tool some page holds by that name, and the
// server registers them under portable names or reports them dropped.
func FuzzPageRoutes(f *testing.F) {
	f.Add("morpho", "zoom", "aztec", "zoom", "c1", "c2")
	f.Add("a/b", "x@y", "a", "b/x@y", "", "")
	f.Add("", "", "\x00", "é.tool", "c", "c")
	f.Fuzz(func(t *testing.T, ns1, name1, ns2, name2, c1, c2 string) {
		regs := []tools.Registration{
			{ClientID: c1, NS: ns1, Tools: []tools.Tool{{Name: name1}, {Name: name2}, {Name: name1}}},
			{ClientID: c2, NS: ns2, Tools: []tools.Tool{{Name: name2}}, ActiveTab: true},
			{ClientID: c2, NS: ns1, Tools: []tools.Tool{{Name: name1}}},
		}
		defs, routes := pageRoutes(regs)
		if len(defs) > MaxNamedPageTools || len(defs) != len(routes) {
			t.Fatalf("%d tools, %d routes", len(defs), len(routes))
		}
		held := map[string]bool{}
		for _, r := range regs {
			for _, tl := range r.Tools {
				held[tl.Name] = true
			}
		}
		for _, d := range defs {
			if !held[routes[d.Name].Name] {
				t.Fatalf("%q routes to %q, which no page holds", d.Name, routes[d.Name].Name)
			}
		}
		srv := mcpserver.New(mcpserver.Options{Name: "fuzz"})
		p := newPageTools(srv, func() (*Client, error) { return nil, fmt.Errorf("no backend") })
		p.sync(context.Background(), regs)
		for name := range p.names() {
			if !strings.HasPrefix(name, PageToolPrefix) || len(name) > mcpserver.MaxPortableName {
				t.Fatalf("registered %q", name)
			}
		}
	})
}
