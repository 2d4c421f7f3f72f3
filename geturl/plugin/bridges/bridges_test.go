package bridges

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/geturl/plugin"
)

// page is a fake ToolBridge: "look" reads, "poke" mutates, "boom" fails
// with a structured error, anything else the page does not know.
type page struct {
	attached bool
	calls    int // BridgeCall's, attached or not
}

func (p *page) BridgeTools() ([]adapters.BridgeTool, error) {
	if !p.attached {
		return nil, adapters.NoPage("no tab", "open it")
	}
	return []adapters.BridgeTool{{Name: "look", Read: true}, {Name: "poke", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
}

func (p *page) BridgeClassify(tool string, _ json.RawMessage) (bool, error) {
	if !p.attached {
		return false, adapters.NoPage("no tab", "open it")
	}
	switch tool {
	case "look":
		return true, nil
	case "poke", "boom", "plain":
		return false, nil
	}
	return false, &adapters.ToolError{Code: "unknown_tool", Message: tool}
}

func (p *page) BridgeCall(_ context.Context, tool string, _ json.RawMessage) (json.RawMessage, error) {
	p.calls++
	if !p.attached {
		return nil, adapters.NoPage("no tab", "open it")
	}
	switch tool {
	case "boom":
		return nil, &adapters.ToolError{Code: "OUTCOME_UNKNOWN", Message: "gone", Hint: "read first", Retryable: true}
	case "plain":
		return nil, errors.New("plain failure")
	case "file":
		return nil, adapters.NotRunning("the bridge does not answer (/home/ann/.stitchslop/session-8787.json is mode 0644)")
	}
	return json.RawMessage(`{"tool":"` + tool + `"}`), nil
}

// optedIn is the authority of a session whose project has write and the
// bridges opt-in.
var optedIn = plugin.Authority{Root: "/srv/app", Write: true, Bridges: true}

type hub struct {
	state adapters.State
	page  *page
}

func (h *hub) Status() []adapters.Status {
	return []adapters.Status{{Name: "other", State: adapters.StateRunning}, {Name: "tab", State: h.state}}
}

func (h *hub) Bridge(name string) (adapters.ToolBridge, bool) {
	if name != "tab" || h.state != adapters.StateRunning {
		return nil, false
	}
	return h.page, true
}

func TestPluginFollowsItsBridge(t *testing.T) {
	for _, tc := range []struct {
		name     string
		hub      *hub // nil: geturl runs alone
		present  bool
		status   string
		tools    int
		callCode string // of a call of "look" ("" = ok)
	}{
		{"alone", nil, false, StatusNotRunning, 0, CodeNotRunning},
		{"disabled", &hub{state: adapters.StateDisabled}, false, StatusNotRunning, 0, CodeNotRunning},
		{"not implemented", &hub{state: adapters.StateNotImplemented}, false, StatusNotRunning, 0, CodeNotRunning},
		{"restarting", &hub{state: adapters.StateRestarting}, true, StatusNotRunning, 0, CodeNotRunning},
		{"failed", &hub{state: adapters.StateFailed}, true, StatusNotRunning, 0, CodeNotRunning},
		{"offline", &hub{state: adapters.StateRunning, page: &page{}}, true, StatusOffline, 0, adapters.CodeBrowserOffline},
		{"attached", &hub{state: adapters.StateRunning, page: &page{attached: true}}, true, StatusReady, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New("tab", "a tab", func() adapters.HubView {
				if tc.hub == nil {
					return nil
				}
				return tc.hub
			})
			if p.Present() != tc.present || p.Status(context.Background()) != tc.status || len(p.Tools()) != tc.tools {
				t.Fatalf("present %v status %q tools %d", p.Present(), p.Status(context.Background()), len(p.Tools()))
			}
			_, err := p.Classify("look", json.RawMessage(`{}`))
			var pe *plugin.Error
			switch {
			case tc.callCode == "" && err != nil:
				t.Fatal(err)
			case tc.callCode != "" && (!errors.As(err, &pe) || pe.Code != tc.callCode || !pe.Retryable):
				t.Fatalf("classify: %v", err)
			}
			if _, err := p.Call(context.Background(), optedIn, "look", json.RawMessage(`{}`)); tc.callCode != "" && (!errors.As(err, &pe) || pe.Code != tc.callCode) {
				t.Fatalf("call: %v", err)
			}
		})
	}
}

func TestClassifyAndCallThroughTheBridge(t *testing.T) {
	h := &hub{state: adapters.StateRunning, page: &page{attached: true}}
	p := New("tab", "a tab", func() adapters.HubView { return h })
	if ts := p.Tools(); ts[0].Mutation || !ts[1].Mutation || string(ts[1].InputSchema) != `{"type":"object"}` {
		t.Fatalf("%+v", ts)
	}
	for _, tc := range []struct {
		tool     string
		mutation bool
		code     string
	}{{"look", false, ""}, {"poke", true, ""}, {"nope", false, "unknown_tool"}} {
		mut, err := p.Classify(tc.tool, json.RawMessage(`{}`))
		var pe *plugin.Error
		if mut != tc.mutation || (tc.code == "") != (err == nil) || err != nil && (!errors.As(err, &pe) || pe.Code != tc.code) {
			t.Errorf("%s: %v %v", tc.tool, mut, err)
		}
	}
	if out, err := p.Call(context.Background(), optedIn, "poke", json.RawMessage(`{}`)); err != nil || string(out) != `{"tool":"poke"}` {
		t.Fatal(string(out), err)
	}
	_, err := p.Call(context.Background(), optedIn, "boom", json.RawMessage(`{}`))
	var pe *plugin.Error
	if !errors.As(err, &pe) || *pe != (plugin.Error{Code: "OUTCOME_UNKNOWN", Detail: "gone", Hint: "read first", Retryable: true}) {
		t.Fatalf("%#v", err)
	}
	if _, err := p.Call(context.Background(), optedIn, "plain", json.RawMessage(`{}`)); err == nil || err.Error() != "plain failure" {
		t.Fatal(err)
	}
	// The agent may read answers through a tunnel: where the operator
	// keeps files stays out of them.
	_, err = p.Call(context.Background(), optedIn, "file", json.RawMessage(`{}`))
	if !errors.As(err, &pe) || pe.Code != adapters.CodeNotRunning || pe.Detail != "the bridge does not answer (… is mode 0644)" {
		t.Fatalf("%#v", err)
	}
}

func TestAllHasOnePluginPerKnownBridge(t *testing.T) {
	ps := All(nil)
	if len(ps) != len(Known) {
		t.Fatal(len(ps))
	}
	for i, p := range ps {
		if p.ID() != Known[i].Name || p.Description() == "" {
			t.Errorf("%d: %s", i, p.ID())
		}
	}
}

// A bridge drives a page whose tools can do anything the page can: a
// session reaches it only when its project opted in to the bridges, and
// only with write. Without that, Admit refuses with the flag to set, and
// Call refuses by itself too, before the page hears of the call.
func TestBridgeAdmitsOnlyTheOptIn(t *testing.T) {
	pg := &page{attached: true}
	p := New("tab", "a tab", func() adapters.HubView { return &hub{state: adapters.StateRunning, page: pg} })
	for _, tc := range []struct {
		name  string
		auth  plugin.Authority
		admit bool
	}{
		{"read-only", plugin.Authority{Root: "/srv/app"}, false},
		{"read-only with the flag", plugin.Authority{Root: "/srv/app", Bridges: true}, false},
		{"terminal with the flag", plugin.Authority{Root: "/srv/app", Terminal: true, Bridges: true}, false},
		{"write without the flag", plugin.Authority{Root: "/srv/app", Write: true, Terminal: true}, false},
		{"write with the flag", optedIn, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Admit(tc.auth)
			var pe *plugin.Error
			if tc.admit != (err == nil) || err != nil && (!errors.As(err, &pe) || pe.Code != CodeBridgesDisabled || pe.Retryable ||
				!strings.Contains(pe.Hint, "--bridges")) {
				t.Fatalf("Admit: %#v", err)
			}
			before := pg.calls
			out, err := p.Call(context.Background(), tc.auth, "look", json.RawMessage(`{}`))
			if tc.admit != (err == nil) || !tc.admit && (!errors.As(err, &pe) || pe.Code != CodeBridgesDisabled || out != nil) {
				t.Fatalf("Call: %s %v", out, err)
			}
			if heard := pg.calls - before; tc.admit != (heard == 1) {
				t.Fatalf("the page heard %d calls", heard)
			}
		})
	}
}
