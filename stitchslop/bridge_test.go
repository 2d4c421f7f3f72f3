package stitchslop

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
)

// The bridge as a ToolBridge: offline errors, the tab's tools classified
// by their readOnlyHint or their name, unlisted commands by name, and
// calls answered with the tab's envelope (without its id) or its error.
// All alike whether the bridge runs in this process, in another one
// (RemoteBridge, as `hub geturl serve` reaches the hub's), or in another
// one the hub's adapter follows.
func TestToolBridge(t *testing.T) {
	for _, mode := range []string{"in-process", "remote", "following"} {
		t.Run(mode, func(t *testing.T) { testToolBridge(t, mode) })
	}
}

func testToolBridge(t *testing.T, mode string) {
	b := startBridge(t, func(o *Config) {
		if mode == "following" {
			o.Token = "" // the hub's adapter arms its own there
		}
	})
	var tb adapters.ToolBridge = b.S
	switch mode {
	case "remote":
		rb := NewRemoteBridge(b.configDir(), b.Port())
		t.Cleanup(rb.Close)
		tb = rb
	case "following":
		dirs := b.Dirs
		hubSide := startBridge(t, func(o *Config) { o.FollowOutside = true }, adaptertest.Options{Dirs: &dirs})
		if st := hubSide.S.Status(); !strings.Contains(st.Note, "following") {
			t.Fatalf("the hub's adapter does not follow: %+v", st)
		}
		tb = hubSide.S
	}
	for _, err := range []error{
		func() error { _, err := tb.BridgeTools(); return err }(),
		func() error { _, err := tb.BridgeClassify("scene.describe", json.RawMessage(`{}`)); return err }(),
		func() error {
			_, err := tb.BridgeCall(context.Background(), "scene.describe", json.RawMessage(`{}`))
			return err
		}(),
	} {
		var te *adapters.ToolError
		if !errors.Is(err, adapters.ErrNoPage) || !errors.As(err, &te) || te.Code != adapters.CodeBrowserOffline || !te.Retryable {
			t.Fatalf("offline: %v", err)
		}
	}

	p, hello := b.attach(map[string]any{"token": testToken})
	p.send(map[string]any{"tools": []map[string]any{
		{"name": "scene.describe", "description": "what is on the hoop"},
		{"name": "stitch.add", "title": "Add a stitch", "inputSchema": map[string]any{"type": "object"}},
		{"name": "scene.peek", "annotations": map[string]any{"readOnlyHint": false}},
		{"name": "hoop.resize", "annotations": map[string]any{"readOnlyHint": true}},
	}})
	adaptertest.WaitFor(t, "the tab's tools", func() bool { ts, _ := b.S.Tools(); return len(ts) == 4 })
	tools, err := tb.BridgeTools()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]adapters.BridgeTool{
		"scene.describe": {Description: "what is on the hoop", Read: true},
		"stitch.add":     {Description: "Add a stitch"},
		"scene.peek":     {},
		"hoop.resize":    {Read: true},
	}
	for _, tl := range tools {
		w := want[tl.Name]
		if tl.Description != w.Description || tl.Read != w.Read || len(tl.InputSchema) == 0 {
			t.Errorf("%+v", tl)
		}
	}
	for _, tc := range []struct {
		tool, args string
		read       bool
		code       string
	}{
		{"scene.describe", `{}`, true, ""},
		{"stitch.add", `{"x":1}`, false, ""},
		{"scene.peek", `{}`, false, ""},   // the tab's hint wins over the name
		{"hoop.resize", `{}`, true, ""},   // both ways
		{"design.list", `{}`, true, ""},   // unlisted: by name
		{"design.purge", `{}`, false, ""}, // unlisted and unknown: a mutation
		{"wait_for_connection", `{}`, false, codeUnknown},
		{"bad name!", `{}`, false, codeUnknown},
		{"scene.describe", `[1]`, false, "invalid_arguments"},
	} {
		read, err := tb.BridgeClassify(tc.tool, json.RawMessage(tc.args))
		var te *adapters.ToolError
		if read != tc.read || (tc.code == "") != (err == nil) || err != nil && (!errors.As(err, &te) || te.Code != tc.code) {
			t.Errorf("classify %s %s: %v %v", tc.tool, tc.args, read, err)
		}
	}

	p.serve(func(cmd string, args map[string]any) map[string]any {
		switch cmd {
		case "fail":
			return map[string]any{"ok": false, "error": "unknown_stitch", "message": "no such stitch"}
		case "bare":
			return map[string]any{"ok": false}
		}
		return map[string]any{"ok": true, "command": cmd, "args": args}
	})
	for _, tc := range []struct {
		tool, want, code, msg string
	}{
		{"scene.describe", `{"args":{"n":1},"command":"scene.describe","ok":true}`, "", ""},
		{"fail", "", "unknown_stitch", "no such stitch"},
		{"bare", "", codePageError, `{"ok":false}`},
	} {
		out, err := tb.BridgeCall(context.Background(), tc.tool, json.RawMessage(`{"n":1}`))
		var te *adapters.ToolError
		switch {
		case tc.code == "" && (err != nil || string(out) != tc.want):
			t.Errorf("%s: %s %v", tc.tool, out, err)
		case tc.code != "" && (!errors.As(err, &te) || te.Code != tc.code || te.Message != tc.msg || te.Retryable):
			t.Errorf("%s: %v", tc.tool, err)
		}
	}
	// A tab that leaves mid-call leaves the outcome unknown: retryable,
	// with what to do first.
	p.Close()
	b.waitConnected(false)
	q, _ := b.attach(map[string]any{"secret": hello["pairingSecret"]})
	go func() { q.next(); q.Close() }()
	_, err = tb.BridgeCall(context.Background(), "stitch.add", json.RawMessage(`{}`))
	var te *adapters.ToolError
	if !errors.As(err, &te) || te.Code != "uncertain" || !te.Retryable || te.Hint == "" {
		t.Fatalf("%v", err)
	}

	// A bridge run elsewhere that stopped is not running: retryable, and
	// nothing is sent anywhere.
	if mode == "remote" {
		if err := b.Stop(); err != nil {
			t.Fatal(err)
		}
		for _, err := range []error{
			func() error { _, err := tb.BridgeTools(); return err }(),
			func() error {
				_, err := tb.BridgeCall(context.Background(), "stitch.add", json.RawMessage(`{}`))
				return err
			}(),
		} {
			if !errors.As(err, &te) || te.Code != adapters.CodeNotRunning || !te.Retryable {
				t.Fatalf("after the bridge stopped: %v", err)
			}
		}
	}
}
