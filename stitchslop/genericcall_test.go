package stitchslop

import (
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// Issue 30: a client whose tool list was fetched before the tab attached
// (and is never fetched again) reaches every tab command through call
// {command, args}; the greeting says so and names the tab's commands; a
// bad call sends nothing.
func TestMCPGenericCallForAFrozenToolList(t *testing.T) {
	b := startBridge(t, nil)
	c := connectSDK(t, b)
	frozen := strings.Join(toolNames(t, c), ",")
	if frozen != ownTools {
		t.Fatalf("tools before the tab = %s, want %s", frozen, ownTools)
	}
	p, _ := b.attach(map[string]any{"token": testToken})
	got := make(chan string, 8)
	p.serve(func(cmd string, args map[string]any) map[string]any {
		got <- cmd
		if cmd == "design.rotate" {
			return map[string]any{"ok": true, "say": "Rotated.", "deg": args["deg"]}
		}
		return map[string]any{"ok": true, "say": "A hoop."}
	})
	p.send(map[string]any{"tools": []any{map[string]any{"name": "scene.describe"}, map[string]any{"name": "design.rotate"}}})
	adaptertest.WaitFor(t, "the tab's tools", func() bool { tools, _ := b.S.Tools(); return len(tools) == 2 })

	res, text := callText(t, c, "wait_for_connection", map[string]any{"timeoutSeconds": 5})
	if res.IsError || !strings.Contains(text, "call them through call {command, args}") ||
		!strings.Contains(text, "the tab's commands: scene.describe, design.rotate") {
		t.Fatalf("greeting = %q", text)
	}
	<-got // the greeting's scene.describe

	res, text = callText(t, c, "call", map[string]any{"command": "design.rotate", "args": map[string]any{"deg": 90}})
	if res.IsError || !strings.HasPrefix(text, "Rotated.") || !strings.Contains(text, `"deg":90`) {
		t.Fatalf("call design.rotate = %v %q", res.IsError, text)
	}
	if cmd := <-got; cmd != "design.rotate" {
		t.Fatalf("the tab ran %q", cmd)
	}
	for _, bad := range []map[string]any{
		{"command": "wait_for_connection"},
		{"command": ""},
		{"command": "design.rotate", "args": []int{1}},
	} {
		if res, text := callText(t, c, "call", bad); !res.IsError || !strings.Contains(text, "Nothing was sent") {
			t.Fatalf("call %v = %q", bad, text)
		}
	}
	select {
	case cmd := <-got:
		t.Fatalf("the tab got %q after a refused call", cmd)
	default:
	}
}
