package hubmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/stitchslop"
)

// stitchOwnTools are the stitchslop bridge's own tools as hub mcp offers
// them, in tools/list order, while a stitchslop bridge is known.
const stitchOwnTools = "stitchslop_wait_for_connection,stitchslop_pair,stitchslop_connection_status,stitchslop_call,stitchslop_call_with_file,stitchslop_call_to_files"

// A client that fetched the tool list before the tab attached, and never
// fetches it again, reaches the tab through stitchslop_call; the
// instructions say so (issue 30).
func TestStitchslopCallForAFrozenToolList(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	h := startHub(t, dirs, hubConfig(t, "stitchslop"))
	s := runFace(t, Options{Dirs: dirs})
	eventually(t, "the stitchslop tools", func() bool { return s.tools() == "hub_status,"+stitchOwnTools })
	if ins, _ := s.init["instructions"].(string); !strings.Contains(ins, "stitchslop_call {command, args}") {
		t.Fatalf("the instructions do not name stitchslop_call: %q", ins)
	}
	h.ssPage("scene.describe")
	eventually(t, "the tab", func() bool {
		return !s.tool("stitchslop_call", map[string]any{"command": "scene.describe"}).IsError
	})
	res := s.tool("stitchslop_call", map[string]any{"command": "scene.describe", "args": map[string]any{"limit": 2}})
	if res.IsError || !strings.Contains(res.Text, `"command":"scene.describe"`) || !strings.Contains(res.Text, `"args":{"limit":2}`) {
		t.Fatalf("stitchslop_call = %q (isError %v)", res.Text, res.IsError)
	}
}

// Issue 28: through hub mcp, an utterance of the Stitch Slop tab reaches
// the conversation as notifications/claude/channel, with no watcher
// process, and the server announces the capability.
func TestStitchslopVoiceAsChannelEvents(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	h := startHub(t, dirs, hubConfig(t, "stitchslop"))
	s := runFace(t, Options{Dirs: dirs})
	if caps, _ := json.Marshal(s.init["capabilities"]); !strings.Contains(string(caps), `"claude/channel"`) {
		t.Fatalf("capabilities %s do not announce claude/channel", caps)
	}
	eventually(t, "the stitchslop tools", func() bool { return s.tools() == "hub_status,"+stitchOwnTools })
	port := h.port("stitchslop")
	r, err := stitchslop.OpenRemote(context.Background(), hub.ExpandHome(stitchslop.DefaultConfigDir, dirs.Home), port)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Pair(context.Background(), "tok_voice12345678"); err != nil {
		t.Fatal(err)
	}
	c, err := adaptertest.Dial(fmt.Sprintf("ws://127.0.0.1:%d/", port), adaptertest.DialOptions{Origin: testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SendText(`{"token":"tok_voice12345678"}`)
	if m, err := c.Next(wait); err != nil || !strings.Contains(m.Text(), `"hello"`) {
		t.Fatalf("page handshake: %v %s", err, m.Text())
	}
	c.SendText(`{"tools":[{"name":"voice.listen"}]}`)
	heard := false
	go func() {
		for {
			m, err := c.Next(time.Hour)
			if err != nil {
				return
			}
			var f map[string]any
			if json.Unmarshal(m.Data, &f) != nil || f["command"] != "voice.listen" {
				continue
			}
			if !heard {
				heard = true
				b, _ := json.Marshal(map[string]any{"id": f["id"], "ok": true, "heard": "zoom in", "atMs": 3})
				c.SendText(string(b))
			} // later polls stay open, as the tab's 25 s do
		}
	}()
	note := s.note("notifications/claude/channel")
	if b, _ := json.Marshal(note); !strings.Contains(string(b), `"content":"zoom in"`) || !strings.Contains(string(b), `"source":"stitchslop"`) {
		t.Fatalf("channel event %s", b)
	}
}
