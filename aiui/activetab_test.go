package aiui

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/tools"
)

// The aiui suite's conformance gap (issue 15): with an activation reporter
// connected, page_tools_list lists the active tab's entries first; without
// one, registration order.
func TestPageToolsListPutsTheActiveTabFirst(t *testing.T) {
	h, _ := start(t, nil)
	for _, r := range []string{
		`{"v":1,"type":"register","ns":"first","hash":"a","tab":{"chromeTabId":10,"windowId":1},"tools":[{"name":"x","description":"d"}]}`,
		`{"v":1,"type":"register","ns":"second","hash":"b","tab":{"chromeTabId":11,"windowId":1},"tools":[{"name":"y","description":"d"}]}`,
	} {
		toolsPage(t, h, r, func(map[string]any) string { return "" })
	}
	_, call := HubTools(func() (*Client, error) { return control(t, h), nil })
	list := func() []tools.Registration {
		t.Helper()
		res, err := call(context.Background(), "page_tools_list", nil)
		if err != nil || res.IsError {
			t.Fatalf("page_tools_list: %+v %v", res, err)
		}
		var regs []tools.Registration
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &regs); err != nil {
			t.Fatal(err)
		}
		return regs
	}
	if l := list(); len(l) != 2 || l[0].NS != "first" {
		t.Fatalf("without a reporter: %+v", l)
	}
	ext := h.MustDial("/tools", adaptertest.DialOptions{})
	ext.SendText(`{"v":1,"type":"activation","tab":{"chromeTabId":11,"windowId":1},"active":true}`)
	adaptertest.WaitFor(t, "the activation", func() bool { l := list(); return len(l) == 2 && l[0].ActiveTab })
	if l := list(); l[0].NS != "second" || l[1].NS != "first" || l[1].ActiveTab {
		t.Fatalf("with the second tab active: %+v", l)
	}
	ext.Close()
	adaptertest.WaitFor(t, "natural order once the reporter left", func() bool {
		l := list()
		return len(l) == 2 && l[0].NS == "first" && !l[1].ActiveTab
	})
}
