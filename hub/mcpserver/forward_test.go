package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func tool(name, schema string) *mcp.Tool {
	t := &mcp.Tool{Name: name, Description: "does " + name}
	if schema != "" {
		t.InputSchema = json.RawMessage(schema)
	}
	return t
}

func manyTools(n int) []*mcp.Tool {
	var out []*mcp.Tool
	for i := range n {
		out = append(out, tool(fmt.Sprintf("t%03d", i), ""))
	}
	return out
}

// A page's tools come and go through Sync; each sync that changes anything
// sends exactly one list_changed, however many tools it touched.
func TestForwarderSyncs(t *testing.T) {
	s := testServer(Options{})
	fw := s.Forward(nil, func(context.Context, string, json.RawMessage) (*mcp.CallToolResult, error) {
		return TextResult("ok"), nil
	})
	c := serveRaw(t, s)
	c.initialize("2025-06-18")
	sdk := connectSDK(t, s, "2025-06-18")

	steps := []struct {
		name    string
		tools   []*mcp.Tool
		changed bool
		list    string // tools/list after the step; "" to skip
	}{
		{"a page attaches with two tools", []*mcp.Tool{tool("scene.describe", ""), tool("render", `{"type":"object"}`)}, true,
			"echo,fail,scene.describe,render"},
		{"the same list again", []*mcp.Tool{tool("scene.describe", ""), tool("render", `{"type":"object"}`)}, false, ""},
		{"reordered: no change, new order", []*mcp.Tool{tool("render", `{"type":"object"}`), tool("scene.describe", "")}, false,
			"echo,fail,render,scene.describe"},
		{"one schema changes", []*mcp.Tool{tool("render", `{"type":"object","properties":{"w":{"type":"number"}}}`), tool("scene.describe", "")}, true, ""},
		{"one goes", []*mcp.Tool{tool("render", `{"type":"object"}`)}, true, "echo,fail,render"},
		{"two hundred arrive at once", manyTools(200), true, ""},
		{"the page detaches", nil, true, "echo,fail"},
		{"nothing to remove", nil, false, ""},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			c.t = t
			changed, dropped := fw.Sync(context.Background(), st.tools)
			if changed != st.changed || len(dropped) != 0 {
				t.Fatalf("Sync = %v %v, want changed=%v", changed, dropped, st.changed)
			}
			want := 0
			if st.changed {
				want = 1
			}
			notes := c.untilPing()
			if len(notes) != want {
				t.Fatalf("%d notifications %q, want %d", len(notes), notes, want)
			}
			for _, n := range notes {
				if n != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
					t.Fatalf("notification %s", n)
				}
			}
			if st.list != "" {
				if got := strings.Join(sdk.toolNames(t), ","); got != st.list {
					t.Fatalf("tools/list = %s, want %s", got, st.list)
				}
			}
		})
	}
}

func TestForwarderSchemas(t *testing.T) {
	cases := []struct {
		name, schema string
		registered   string // the inputSchema tools/list shows; "" if dropped
	}{
		{"absent", "", `{"type":"object"}`},
		{"raw object kept byte for byte", `{"type":"object","properties":{"limit":{"type":"number"}}}`, `{"type":"object","properties":{"limit":{"type":"number"}}}`},
		{"type added", `{"properties":{}}`, `{"properties":{},"type":"object"}`},
		{"an array", `[1]`, ""},
		{"a string schema", `{"type":"string"}`, ""},
		{"a bare string", `"x"`, ""},
		// The SDK panics on this one (x-mcp-header on an object).
		{"bad x-mcp-header", `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"X-A"}}}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{Name: "t", Version: "1"})
			fw := s.Forward(nil, nil)
			_, dropped := fw.Sync(context.Background(), []*mcp.Tool{tool("x", tc.schema)})
			if (tc.registered == "") != (len(dropped) == 1) {
				t.Fatalf("dropped = %v", dropped)
			}
			// Raw bytes: an SDK client would re-encode the schema.
			c := serveRaw(t, s)
			c.initialize("2025-06-18")
			c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			var res struct {
				Result struct {
					Tools []struct {
						InputSchema json.RawMessage `json:"inputSchema"`
					} `json:"tools"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(c.recv()), &res); err != nil {
				t.Fatal(err)
			}
			if tc.registered == "" {
				if len(res.Result.Tools) != 0 {
					t.Fatalf("registered %s", res.Result.Tools[0].InputSchema)
				}
				return
			}
			if got := string(res.Result.Tools[0].InputSchema); got != tc.registered {
				t.Fatalf("inputSchema %s, want %s", got, tc.registered)
			}
		})
	}
}

// Names map deterministically: collisions are renamed by a hash of the
// original, whatever order the page lists them in, and a renamed tool
// says its original name.
func TestForwarderNames(t *testing.T) {
	cases := []struct {
		name  string
		namer Namer
		tools []string
		want  map[string]string // registered → original
	}{
		{"identity", nil, []string{"scene.describe", "render"},
			map[string]string{"scene.describe": "scene.describe", "render": "render"}},
		{"prefixed", Prefix("stitchslop_"), []string{"scene.describe", "render"},
			map[string]string{"stitchslop_scene_describe": "scene.describe", "stitchslop_render": "render"}},
		{"a dot and an underscore collide", Prefix("p_"), []string{"a.b", "a_b"},
			map[string]string{hashedName("p_a_b", "a.b"): "a.b", hashedName("p_a_b", "a_b"): "a_b"}},
		{"the same, listed the other way round", Prefix("p_"), []string{"a_b", "a.b"},
			map[string]string{hashedName("p_a_b", "a.b"): "a.b", hashedName("p_a_b", "a_b"): "a_b"}},
		{"the server's own tool is not shadowed", nil, []string{"echo"},
			map[string]string{hashedName("echo", "echo"): "echo"}},
		{"a name the SDK would refuse", nil, []string{"has space"}, map[string]string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testServer(Options{})
			var mu sync.Mutex
			var called []string
			fw := s.Forward(tc.namer, func(_ context.Context, name string, _ json.RawMessage) (*mcp.CallToolResult, error) {
				mu.Lock()
				called = append(called, name)
				mu.Unlock()
				return TextResult("ok"), nil
			})
			var in []*mcp.Tool
			for _, n := range tc.tools {
				in = append(in, tool(n, ""))
			}
			fw.Sync(context.Background(), in)
			got := fw.Names()
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("names %v, want %v", got, tc.want)
			}
			sdk := connectSDK(t, s, "2025-06-18")
			res, err := sdk.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range res.Tools {
				orig, ok := tc.want[tl.Name]
				if !ok {
					continue
				}
				if len(tl.Name) > MaxPortableName && tc.namer != nil {
					t.Errorf("%s is longer than %d", tl.Name, MaxPortableName)
				}
				if renamed := tl.Name != orig; renamed != strings.Contains(tl.Description, fmt.Sprintf("%q", orig)) {
					t.Errorf("%s: description %q", tl.Name, tl.Description)
				}
				if _, err := sdk.CallTool(context.Background(), &mcp.CallToolParams{Name: tl.Name}); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				last := called[len(called)-1]
				mu.Unlock()
				if last != orig {
					t.Errorf("calling %s reached %q, want %q", tl.Name, last, orig)
				}
			}
		})
	}
}

// Two forwarders on one server (hub mcp: one per bridge) list in the order
// they were made, each in its page's order, after the server's own tools.
func TestForwardersOrderAndUnknownTool(t *testing.T) {
	var unknown []string
	s := testServer(Options{UnknownTool: func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		unknown = append(unknown, req.Params.Name)
		return ErrorResult("no page"), nil
	}})
	a := s.Forward(Prefix("a_"), nil)
	b := s.Forward(Prefix("b_"), nil)
	b.Sync(context.Background(), []*mcp.Tool{tool("z", ""), tool("y", "")})
	a.Sync(context.Background(), []*mcp.Tool{tool("x", "")})
	sdk := connectSDK(t, s, "2025-06-18")
	if got := strings.Join(sdk.toolNames(t), ","); got != "echo,fail,a_x,b_z,b_y" {
		t.Fatalf("tools/list = %s", got)
	}
	res, err := sdk.CallTool(context.Background(), &mcp.CallToolParams{Name: "gone.tool"})
	if err != nil || !res.IsError || fmt.Sprint(unknown) != "[gone.tool]" {
		t.Fatalf("unknown tool: %v %+v %v", err, res, unknown)
	}
}

// With ListChangedDelay, every change within the delay rides on one
// notification, sent when the delay has passed (synctest's clock: nothing
// here waits on the wall clock).
func TestListChangedDelay(t *testing.T) {
	const delay = 200 * time.Millisecond
	cases := []struct {
		name  string
		syncs [][]*mcp.Tool // applied at once, one after another
		want  int           // notifications once the delay has passed
	}{
		{"one change", [][]*mcp.Tool{{tool("a", "")}}, 1},
		{"a burst", [][]*mcp.Tool{{tool("a", "")}, {tool("a", ""), tool("b", "")}, nil, {tool("c", "")}}, 1},
		{"no change", [][]*mcp.Tool{nil}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testServer(Options{ListChangedDelay: delay})
				a := s.Forward(Prefix("a_"), nil)
				b := s.Forward(Prefix("b_"), nil)
				c := serveRaw(t, s)
				c.initialize("2025-06-18")
				for i, tools := range tc.syncs {
					fw := a
					if i%2 == 1 {
						fw = b
					}
					fw.Sync(context.Background(), tools)
				}
				if got := c.untilPing(); len(got) != 0 {
					t.Fatalf("notified before the delay: %q", got)
				}
				time.Sleep(delay)
				synctest.Wait()
				got := c.untilPing()
				if len(got) != tc.want {
					t.Fatalf("%d notifications %q, want %d", len(got), got, tc.want)
				}
				for _, n := range got {
					if n != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
						t.Fatalf("notification %s", n)
					}
				}
				// A later change is announced again.
				a.Sync(context.Background(), []*mcp.Tool{tool("z", "")})
				time.Sleep(delay)
				synctest.Wait()
				if got := c.untilPing(); len(got) != 1 {
					t.Fatalf("after a later change: %q", got)
				}
			})
		})
	}
}

// A change made before the client initialized is in its first tools/list:
// the delayed list_changed of that burst is not for it (hub mcp sent one
// 200 ms after every initialize). A change after it initialized, in the
// same burst, still is.
func TestListChangedDelaySkipsChangesBeforeReady(t *testing.T) {
	const delay = 200 * time.Millisecond
	for _, changeAfter := range []bool{false, true} {
		t.Run(map[bool]string{false: "before only", true: "and after"}[changeAfter], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testServer(Options{ListChangedDelay: delay})
				a := s.Forward(Prefix("a_"), nil)
				c := serveRaw(t, s)
				a.Sync(context.Background(), []*mcp.Tool{tool("x", "")})
				c.initialize("2025-06-18")
				want := 0
				if changeAfter {
					a.Sync(context.Background(), []*mcp.Tool{tool("y", "")})
					want = 1
				}
				time.Sleep(delay)
				synctest.Wait()
				if got := c.untilPing(); len(got) != want {
					t.Fatalf("%d notifications %q, want %d", len(got), got, want)
				}
			})
		})
	}
}
