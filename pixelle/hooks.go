package pixelle

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
)

// The hooks through which the rest of the binary reaches the hub's relay
// without importing this package (adapters.Factory): from another process
// as its agent client (Remote), and as the pixelle part of `hub mcp`
// (hubFace).

// hubToolPrefix is what every pixelle tool of `hub mcp` starts with.
const hubToolPrefix = "pixelle_"

// hubFaceSpec is the pixelle part of `hub mcp`.
var hubFaceSpec = adapters.FaceSpec{
	Instructions: "The Pixelle canvas is pixelle_state, pixelle_selection and pixelle_call (any canvas command by name). " +
		"To connect one, the person clicks Connect locally in Pixelle and gives you the pairing code: call pixelle_pair with it (never a guessed code); " +
		"pixelle_wait blocks until a paired canvas is there.",
	New: newHubFace,
}

// RelayURL is the canonical URL of the relay on a loopback port.
func RelayURL(port int) string { return "http://" + hub.LoopbackHost + ":" + strconv.Itoa(port) }

// remote reaches the hub's relay that st describes from another process
// (Factory.Remote), as the agent client of §5.3.
func remote(env adapters.RemoteEnv, st adapters.Status) (adapters.ToolBridge, bool) {
	return NewRemoteBridge(env.Dirs, RelayURL(st.Ports[0])), true
}

// hubFace is the pixelle part of `hub mcp`: MCPTools, offered while the
// hub runs the relay. They look the relay up for every call, so a relay
// restarted meanwhile is simply used.
type hubFace struct {
	fw   *mcpserver.Forwarder
	defs []*mcp.Tool
}

func newHubFace(env adapters.FaceEnv) adapters.Face {
	h := &hubFace{}
	var call mcpserver.CallFunc
	h.defs, call = MCPTools(env.Dirs, func(ctx context.Context) (string, error) {
		st, err := env.Adapter(ctx)
		if err != nil {
			return "", err
		}
		return RelayURL(st.Ports[0]), nil
	})
	h.fw = env.Server.Forward(mcpserver.Identity, call)
	return h
}

// Follow offers the tools until ctx ends: there is nothing to hold on to
// between calls.
func (h *hubFace) Follow(ctx context.Context, _ adapters.Status, attached func()) error {
	h.fw.Sync(ctx, h.defs)
	attached()
	<-ctx.Done()
	return nil
}

func (h *hubFace) Absent(string) { h.fw.Clear(context.Background()) }

func (h *hubFace) Tools() []string { return slices.Sorted(maps.Keys(h.fw.Names())) }

func (h *hubFace) Unknown(tool string) (string, bool) {
	if !strings.HasPrefix(tool, hubToolPrefix) {
		return "", false
	}
	return "Every canvas command goes through pixelle_call {\"command\": {...}}; pixelle_wait blocks until a paired canvas is there.", true
}
