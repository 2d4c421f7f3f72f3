package hubmcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// aiuiPage attaches a scripted page to the hub's aiui backend on /tools,
// declaring tools in ns, answering every call with its ns and arguments.
func (h *testHub) aiuiPage(ns string, tools ...string) *adaptertest.WSClient {
	h.t.Helper()
	c, err := adaptertest.Dial(fmt.Sprintf("ws://127.0.0.1:%d/tools", h.port("aiui")), adaptertest.DialOptions{Origin: "http://localhost:5173"})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(c.Close)
	var list []string
	for _, n := range tools {
		list = append(list, fmt.Sprintf(`{"name":%q,"description":"a page tool"}`, n))
	}
	c.SendText(fmt.Sprintf(`{"v":1,"type":"register","ns":%q,"hash":"h-%s","url":"http://localhost:5173/%s","tools":[%s]}`, ns, ns, ns, strings.Join(list, ",")))
	if m, err := c.Next(wait); err != nil || !strings.Contains(m.Text(), `"registered"`) {
		h.t.Fatalf("register: %v %s", err, m.Text())
	}
	go func() {
		for {
			m, err := c.Next(time.Hour)
			if err != nil {
				return
			}
			var call struct {
				Type, CallID, NS string
				Args             json.RawMessage
			}
			if json.Unmarshal(m.Data, &call) == nil && call.Type == "call" {
				c.SendText(fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":true,"value":{"ns":%q,"args":%s}}`, call.CallID, call.NS, rawOrNull(call.Args)))
			}
		}
	}()
	return c
}

// An aiui page's tools come as tools of their own (aiui_…), with
// list_changed; a client that never re-lists still finds each in
// hub_status with the generic call that reaches it, and calls it so.
func TestPageToolsByNameAndForStaleClients(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	h := startHub(t, dirs, hubConfig(t, "aiui"))
	s := runFace(t, Options{Dirs: dirs})
	eventually(t, "the aiui tools", func() bool { return s.tools() == "hub_status,channel_info,page_tools_call,page_tools_list" })
	if res := s.tool("page_tools_call", map[string]any{"name": "zoom"}); !res.IsError || !strings.Contains(res.Text, "aiui dev overlay") {
		t.Fatalf("page_tools_call with no page = %+v", res)
	}

	s.DropNotes()
	h.aiuiPage("morpho", "zoom", "set.params")
	s.note("notifications/tools/list_changed")
	eventually(t, "the page's tools by name", func() bool {
		return s.tools() == "hub_status,channel_info,page_tools_call,page_tools_list,aiui_zoom,aiui_set_params"
	})
	if res := s.tool("aiui_set_params", map[string]any{"f": 2}); res.IsError || res.Text != `{"ns":"morpho","args":{"f":2}}` {
		t.Fatalf("aiui_set_params = %+v", res)
	}

	// A second page holding zoom: zoom routes by the directory, and each
	// page's is named too.
	h.aiuiPage("aztec", "zoom")
	eventually(t, "the shared name's tools", func() bool { return strings.Contains(s.tools(), "aiui_aztec_zoom") })
	if res := s.tool("aiui_aztec_zoom", map[string]any{}); res.IsError || !strings.Contains(res.Text, `"ns":"aztec"`) {
		t.Fatalf("aiui_aztec_zoom = %+v", res)
	}

	status := s.tool("hub_status", nil).Text
	var rep struct {
		Bridges []struct {
			Name      string
			PageTools struct {
				Call  string
				Tools []struct {
					Tool string
					Call json.RawMessage
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(status), &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range rep.Bridges {
		if b.Name == "aiui" {
			got = append(got, b.PageTools.Call)
			for _, pt := range b.PageTools.Tools {
				var call map[string]string
				json.Unmarshal(pt.Call, &call)
				got = append(got, pt.Tool+"="+call["name"]+"@"+call["ns"])
			}
		}
	}
	if want := "page_tools_call aiui_aztec_zoom=zoom@aztec aiui_morpho_zoom=zoom@morpho aiui_set_params=set.params@ aiui_zoom=zoom@"; strings.Join(got, " ") != want {
		t.Fatalf("hub_status's aiui page tools = %q, want %q", strings.Join(got, " "), want)
	}
	// The frozen client's way: the generic call with hub_status's arguments.
	if res := s.tool("page_tools_call", map[string]any{"name": "zoom", "ns": "aztec", "args": map[string]any{"f": 3}}); res.IsError || res.Text != `{"ns":"aztec","args":{"f":3}}` {
		t.Fatalf("page_tools_call = %+v", res)
	}
	// A page tool no page holds any more says where to look.
	if res := s.tool("aiui_gone", nil); !res.IsError || !strings.Contains(res.Text, "page_tools_list") {
		t.Fatalf("aiui_gone = %+v", res)
	}
}

func rawOrNull(r json.RawMessage) string {
	if len(r) == 0 {
		return "null"
	}
	return string(r)
}
