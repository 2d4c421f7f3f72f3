package adapters

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
)

// A Face is one bridge's part of `hub mcp`, the one MCP server that
// serves every bridge of the running hub. hub mcp builds each registered
// FaceSpec's face once, in registry order, on its shared server, and
// drives them all alike, knowing nothing of any bridge:
//
//   - while the hub runs the adapter (running, with its ports) it calls
//     Follow with the adapter's status line, and after Follow returns it
//     looks the adapter up again (it may have restarted on another port);
//   - while it does not (no hub, disabled, restarting, failed) it calls
//     Absent with the reason, once for each new reason;
//   - hub_status lists each face's Tools, and the answer to a call of a
//     tool the server does not offer now names the face whose Unknown
//     claims it.
//
// The calls for one face come from one goroutine at a time, but Tools and
// Unknown are asked from any goroutine, at any time.
type Face interface {
	// Follow offers the bridge's tools for the adapter that the running
	// hub reports as st, and serves them until ctx ends (the hub went, or
	// hub mcp is leaving) or the face loses the adapter. Before it
	// returns it calls attached once it has reached the adapter and
	// offers its current tools (or the adapter went before that). An
	// error returned without attached having been called says why the
	// face cannot reach the adapter: hub mcp withdraws its tools for that
	// reason and looks again after a pause. Once attached, a return only
	// means the adapter is to be looked up again; the tools offered stay
	// until the next Follow or Absent.
	Follow(ctx context.Context, st Status, attached func()) error
	// Absent withdraws every tool of the face; why says why none is
	// offered, and the face's answers may repeat it.
	Absent(why string)
	// Tools are the names of the tools the face offers now, sorted.
	Tools() []string
	// Unknown reports whether tool is a name of this face's, for the
	// answer to a call of a tool the server does not offer now; hint is
	// what the model can do about it while the face follows its adapter
	// ("" for nothing more to say).
	Unknown(tool string) (hint string, ok bool)
}

// FaceRunner is implemented by a Face with work of its own for the whole
// life of hub mcp besides Follow (stitchslop's keeps its page tools in
// step with whichever bridge it follows). hub mcp starts Run before it
// looks for the hub; Run returns once ctx ends (hub mcp is leaving).
type FaceRunner interface {
	Run(ctx context.Context)
}

// FacePages is implemented by a Face whose tools include its pages' own
// tools by name. hub_status lists them, each with the arguments of the
// face's generic call tool that reach the same page tool, so an agent
// whose client never re-fetched its tool list (it ignores list_changed)
// can still find and call a page's tool.
type FacePages interface {
	// PageTools are the page tools offered now, sorted by Tool, and the
	// name of the generic call tool that takes their Call.
	PageTools() (call string, tools []PageTool)
}

// PageTool is one page tool a face offers by name.
type PageTool struct {
	// Tool is the MCP tool's name.
	Tool string `json:"tool"`
	// Call are the generic call's arguments that reach the same page
	// tool, without the page tool's own arguments.
	Call json.RawMessage `json:"call"`
}

// FaceSpec is a bridge's part of `hub mcp`, as its Factory declares it.
// What the server announces at initialize is fixed before any face is
// built, so it is declared here rather than asked of the Face.
type FaceSpec struct {
	// Instructions are the bridge's sentences of the server's
	// instructions: which tools are its and how to use them.
	Instructions string
	// Experimental are capabilities the server must announce for the
	// face (aiui's claude/channel); nil for none.
	Experimental map[string]any
	// New registers the face's tools on env.Server, none of them offered
	// yet; tools/list shows them in the order they were registered.
	New func(env FaceEnv) Face
}

// FaceEnv is what a Face gets from hub mcp.
type FaceEnv struct {
	// Server is the MCP server every face shares.
	Server *mcpserver.Server
	Dirs   hub.Dirs
	// Log is stderr's, never stdout's: stdout is the protocol.
	Log *slog.Logger
	// FaceID is how this hub mcp names itself to the bridges it attaches
	// to (their logs, aiui's routing); unique to the process.
	FaceID string
	// CWD is the agent's working directory (aiui routes prompts by it).
	CWD string
	// Adapter asks the running hub for the face's adapter now: its status
	// line while it runs with its ports, else an error saying why not (no
	// hub runs, disabled, restarting…). For a face that looks its adapter
	// up for every call rather than following it (pixelle's relay).
	Adapter func(ctx context.Context) (Status, error)
}
