package hubmcp

import (
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
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
