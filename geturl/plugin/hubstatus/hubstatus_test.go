package hubstatus

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/geturl/plugin"
)

type fakeHub []adapters.Status

func (f fakeHub) Status() []adapters.Status { return f }

func (fakeHub) Bridge(string) (adapters.ToolBridge, bool) { return nil, false }

func TestHubStatus(t *testing.T) {
	hub := fakeHub{
		{Name: "geturl", State: adapters.StateRunning, Ports: []int{47432, 47433}, AgentSessions: 2, LastActivity: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Name: "aiui", State: adapters.StateFailed, Restarts: 3, LastError: "open /home/me/.aiui/registry.json: permission denied", Note: "see /var/log/x"},
	}
	p := New(func() adapters.HubView { return hub })
	if p.Status(context.Background()) != "ready" || len(p.Tools()) != 1 || p.Tools()[0].Mutation {
		t.Fatal("tools")
	}
	if mut, err := p.Classify(Tool, json.RawMessage(`{}`)); mut || err != nil {
		t.Fatal(mut, err)
	}
	out, err := p.Call(context.Background(), plugin.Authority{}, Tool, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if !strings.Contains(s, `"name":"geturl","state":"running","ports":[47432,47433]`) || strings.Contains(s, "/home/me") || !strings.Contains(s, "open …: permission denied") || strings.Contains(s, "/var/log") {
		t.Fatal(s)
	}
	out, _ = p.Call(context.Background(), plugin.Authority{}, Tool, json.RawMessage(`{"adapter":"aiui"}`))
	if strings.Contains(string(out), "geturl") {
		t.Fatal(string(out))
	}
	var pe *plugin.Error
	for _, bad := range []struct{ tool, args, code string }{
		{Tool, `{"adapter":"nope"}`, CodeUnknownAdapter},
		{Tool, `{"x":1}`, CodeInvalidArguments},
		{Tool, `{"adapter":1}`, CodeInvalidArguments},
		{"other", `{}`, CodeUnknownTool},
	} {
		_, err := p.Call(context.Background(), plugin.Authority{}, bad.tool, json.RawMessage(bad.args))
		if !errors.As(err, &pe) || pe.Code != bad.code {
			t.Errorf("%s %s: %v", bad.tool, bad.args, err)
		}
	}
}

func TestStandalone(t *testing.T) {
	p := New(func() adapters.HubView { return nil })
	if p.Status(context.Background()) != "standalone" {
		t.Fatal()
	}
	out, err := p.Call(context.Background(), plugin.Authority{}, Tool, json.RawMessage(`{}`))
	if err != nil || !strings.Contains(string(out), `"standalone":true,"adapters":[]`) || !strings.Contains(string(out), "alone") {
		t.Fatal(string(out), err)
	}
}
