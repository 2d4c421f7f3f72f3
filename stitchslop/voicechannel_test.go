package stitchslop

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub/mcpserver"
)

// Issue 28 item 5, beyond the plugin: the MCP face pushes each utterance
// as a notifications/claude/channel event while a tab that declares
// voice.listen is attached, with no watcher process; and it is that tab's
// one listener, so a shell `listen` beside it is told one runs.
func TestFacePushesUtterancesAsChannelEvents(t *testing.T) {
	b := startBridge(t, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := adaptertest.NewMCPClient(inW, outR)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.S.ServeMCP(ctx, &mcpserver.LineTransport{In: inR, Out: outW}, nil)
		outW.Close()
	}()
	t.Cleanup(func() { c.Close(); cancel(); <-done })
	init, err := c.Initialize("2025-06-18", frameWait)
	if err != nil {
		t.Fatal(err)
	}
	if caps, _ := json.Marshal(init["capabilities"]); !strings.Contains(string(caps), `"claude/channel"`) {
		t.Fatalf("capabilities %s do not announce claude/channel", caps)
	}
	p, _ := b.attach(map[string]any{"token": testToken})
	var polls atomic.Int32
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	p.serve(func(cmd string, args map[string]any) map[string]any {
		if cmd != "voice.listen" {
			return map[string]any{"ok": true}
		}
		if polls.Add(1) == 1 {
			return map[string]any{"ok": true, "voice": "on", "heard": "make the border blue", "atMs": 7, "selection": []any{"o1"}}
		}
		<-hold // the next poll waits, as the tab's 25 s does
		return map[string]any{"ok": true}
	})
	p.send(map[string]any{"tools": []any{map[string]any{"name": "voice.listen"}, map[string]any{"name": "scene.describe"}}})
	note, err := c.Note(MethodChannel, frameWait)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := json.Marshal(note)
	for _, want := range []string{`"content":"make the border blue"`, `"kind":"voice"`, `"atMs":"7"`, `"selection":"[\"o1\"]"`} {
		if !strings.Contains(string(ev), want) {
			t.Fatalf("channel event %s lacks %s", ev, want)
		}
	}
	adaptertest.WaitFor(t, "the second poll", func() bool { return polls.Load() >= 2 })
	var stdout, stderr bytes.Buffer
	sc := &shellClient{ConfigDir: b.configDir(), Stdout: &stdout, Stderr: &stderr}
	if err := sc.listen(context.Background()); exitCode(err) != 1 || !strings.Contains(err.Error(), "a listener already runs") {
		t.Fatalf("a shell listen beside the face: %v", err)
	}
}
