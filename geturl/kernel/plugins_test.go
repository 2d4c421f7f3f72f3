package kernel

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

type fakePlugins struct{}

func (fakePlugins) List() []route.PluginSummary {
	return []route.PluginSummary{{ID: "hub-status", Description: "the hub's adapters", Tools: 1}}
}

func (fakePlugins) Tools(id string) ([]route.PluginTool, bool) {
	if id != "hub-status" {
		return nil, false
	}
	return []route.PluginTool{{Name: "status", InputSchema: json.RawMessage(`{"type":"object"}`)}}, true
}

func TestPluginDiscovery(t *testing.T) {
	p := newProject(t, nil)
	if body := p.ok("/k", nil); body != `{"ok":true,"plugins":[]}` {
		t.Fatalf("%s", body)
	}
	p.fail("/k?plugin=hub-status", route.CodeUnknownPlugin)

	p.k = New(Options{Plugins: fakePlugins{}})
	if body := p.ok("/k", nil); !strings.Contains(body, `"id":"hub-status"`) {
		t.Fatalf("%s", body)
	}
	if body := p.ok("/k?plugin=hub-status", nil); body != `{"ok":true,"plugin":"hub-status","tools":[{"name":"status","mutation":false,"inputSchema":{"type":"object"}}]}` {
		t.Fatalf("%s", body)
	}
	p.fail("/k?plugin=hub-status&tool=status&raw={}", CodePluginCallsUnavailable)
	if e := p.fail("/k?plugin=hub-status&tool=nope", route.CodeUnknownTool); !strings.Contains(e.Hint, readBase+"/k?plugin=hub-status") {
		t.Fatalf("%+v", e)
	}
	p.fail("/k?raw={}", transport.CodeMissingParameter)
	p.fail("/k?plugin=x&tool=y&wait=5000", transport.CodeValueOutOfRange)
	// A blob name no /s can stage is refused as the native routes refuse it.
	p.fail("/k?plugin=hub-status&tool=status&blob=a/b", transport.CodeInvalidParameter)
	// The journal's controls mean something only for a call: on a listing
	// or a schema they are refused, not silently ignored.
	for _, q := range []string{"/k?wait=1000", "/k?plugin=hub-status&run=2", "/k?plugin=hub-status&call=c1"} {
		p.fail(q, transport.CodeMissingParameter)
	}
}
