package adapters

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

type fakeBridge struct {
	port   int
	closed bool
}

func (b *fakeBridge) BridgeTools() ([]BridgeTool, error)                   { return nil, nil }
func (b *fakeBridge) BridgeClassify(string, json.RawMessage) (bool, error) { return true, nil }
func (b *fakeBridge) BridgeCall(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}
func (b *fakeBridge) Close() { b.closed = true }

// The running hub as a HubView: asked for every use, a bridge only for an
// adapter running with ports, built once per set of ports and directory,
// and the one built for ports the adapter left is closed.
func TestRunningHubView(t *testing.T) {
	if (CommandEnv{}).HubView() != nil {
		t.Fatal("a view without a running hub to ask")
	}
	var statuses []Status
	var hubErr error
	built := 0
	env := CommandEnv{RunningHub: func(context.Context) ([]Status, error) { return statuses, hubErr }}
	if env.HubView() != nil {
		t.Fatal("a view without remote bridges")
	}
	env.Remote = func(name string, st Status) (ToolBridge, bool) {
		if name == "nobridge" {
			return nil, false
		}
		built++
		return &fakeBridge{port: st.Ports[0]}, true
	}
	v := env.HubView()

	if len(v.Status()) != 0 {
		t.Fatal("statuses with no hub")
	}
	if _, ok := v.Bridge("stitchslop"); ok {
		t.Fatal("a bridge with no hub")
	}
	statuses = []Status{
		{Name: "stitchslop", State: StateRunning, Ports: []int{8787}, Dir: "/home/u/.ss"},
		{Name: "pixelle", State: StateRestarting, Ports: []int{4317}},
		{Name: "aiui", State: StateRunning},
		{Name: "nobridge", State: StateRunning, Ports: []int{1}},
	}
	if len(v.Status()) != 4 {
		t.Fatal(v.Status())
	}
	for _, name := range []string{"pixelle", "aiui", "nobridge", "geturl"} {
		if _, ok := v.Bridge(name); ok {
			t.Errorf("a bridge for %s", name)
		}
	}
	b1, ok := v.Bridge("stitchslop")
	b2, _ := v.Bridge("stitchslop")
	if !ok || b1 != b2 || built != 1 {
		t.Fatalf("bridges %v %v, built %d", b1, b2, built)
	}
	statuses[0].Ports = []int{8788}
	b3, _ := v.Bridge("stitchslop")
	if b3.(*fakeBridge).port != 8788 || !b1.(*fakeBridge).closed || built != 2 {
		t.Fatalf("after the move: %+v, old closed %v, built %d", b3, b1.(*fakeBridge).closed, built)
	}
	statuses[0].Dir = "/elsewhere"
	if b4, _ := v.Bridge("stitchslop"); b4 == b3 || !b3.(*fakeBridge).closed || built != 3 {
		t.Fatalf("after a change of directory: the same bridge %v, old closed %v, built %d", b4 == b3, b3.(*fakeBridge).closed, built)
	}
	hubErr = errors.New("the hub does not answer")
	if len(v.Status()) != 0 {
		t.Fatal("statuses from a hub that does not answer")
	}
	if _, ok := v.Bridge("stitchslop"); ok {
		t.Fatal("a bridge of a hub that does not answer")
	}
}

// HubAdapter is the running hub's line for an adapter running with ports,
// and "not running" for anything else, a hub that cannot be asked included.
func TestHubAdapter(t *testing.T) {
	if _, ok := (CommandEnv{}).HubAdapter(context.Background(), "pixelle"); ok {
		t.Fatal("an adapter with no hub to ask")
	}
	statuses := []Status{
		{Name: "pixelle", State: StateRunning, Ports: []int{4317}},
		{Name: "aiui", State: StateRestarting, Ports: []int{7331}},
		{Name: "geturl", State: StateRunning},
	}
	var hubErr error
	env := CommandEnv{RunningHub: func(ctx context.Context) ([]Status, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the hub is asked without a deadline")
		}
		return statuses, hubErr
	}}
	for _, tc := range []struct {
		name string
		ok   bool
	}{{"pixelle", true}, {"aiui", false}, {"geturl", false}, {"stitchslop", false}} {
		st, ok := env.HubAdapter(context.Background(), tc.name)
		if ok != tc.ok || (ok && st.Ports[0] != 4317) {
			t.Errorf("HubAdapter(%s) = %+v, %v; want ok %v", tc.name, st, ok, tc.ok)
		}
	}
	hubErr = errors.New("no answer")
	if _, ok := env.HubAdapter(context.Background(), "pixelle"); ok {
		t.Fatal("an adapter of a hub that does not answer")
	}
}
