package stitchslop

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
)

// bridgeFace is what the MCP face needs from a bridge: its tools and their
// changes, a call to the page, a status report, a wait for the page, a
// run-time token, and the bookkeeping of agent sessions and activity.
// *Server is the bridge in this process; a face of a bridge that another
// process runs can implement it over that bridge's control plane (§4).
type bridgeFace interface {
	Origin() string
	Port() int
	// Tools is the page's sanitised tool list and whether a page is attached.
	Tools() ([]PageTool, bool)
	// Subscribe runs fn on every attach, revised tool list and detach.
	Subscribe(fn func()) (cancel func())
	// Call sends a command to the page; ErrNoPage when none is attached.
	Call(ctx context.Context, command string, args json.RawMessage) ([]byte, error)
	Report() StatusReport
	// pair arms a one-time token for site ("" the bridge's own) and says
	// for which.
	pair(ctx context.Context, site, token string) (string, error)
	waitAttached(ctx context.Context, d time.Duration) bool
	agentActivity()
	sessionAdd(delta int)
	logger() *slog.Logger
	// voiceDir is the config dir of the bridge's session file, where the
	// tab's listen lock lives ("" while there is no bridge).
	voiceDir() string
}

var _ bridgeFace = (*Server)(nil)

// ServeMCP runs the MCP face (§3) over t until the client goes away or ctx
// ends. onInit runs once, at initialize, before its answer goes out (the
// standalone bridge marks itself owned there, §2.7/§2.8). It reports
// whether initialize was received, which decides whether a closed stdin
// ends the process (§2.8).
func (s *Server) ServeMCP(ctx context.Context, t mcp.Transport, onInit func()) (initialized bool, err error) {
	return serveFace(ctx, s, t, onInit, nil)
}

// legacyVersions are the protocol versions the face serves: those with
// the initialize handshake §3.2 describes. A client that tries the
// stateless protocol first is told so and falls back to initialize.
var legacyVersions = slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= "2026-07-28" })

// face is one MCP session's server: the bridge's own tools, and the page's
// forwarded with their raw schemas.
type face struct {
	b   bridgeFace
	srv *mcpserver.Server
	fw  *mcpserver.Forwarder
	// prefix is what the bridge's own tools are offered under ("" on the
	// bridge's own face; hub mcp offers them prefixed), for the advice
	// that names them.
	prefix string
	// id names this face's calls to the bridge (who drives the tab).
	id string
	// own opens a bridge of this face's own for a second tab
	// (wait_for_connection ownBridge), nil where the face's bridge is its
	// own already. opened: this call started it (false: it ran already).
	own func(ctx context.Context) (opened bool, err error)
}

// waitName is the wait tool's name on this face's server, for the advice
// that says to call it (hub mcp offers it prefixed).
func (f *face) waitName() string { return f.prefix + toolWait }

// toolName is the bridge tool name as this face offers it.
func (f *face) toolName(name string) string { return f.prefix + name }

// serveFace serves one MCP session of b; own (nil: b is the face's own
// bridge already) opens a bridge of its own for wait_for_connection's
// ownBridge.
func serveFace(ctx context.Context, b bridgeFace, t mcp.Transport, onInit func(), own func(context.Context) (bool, error)) (bool, error) {
	b.sessionAdd(1)
	defer b.sessionAdd(-1)
	f := newFace(b, onInit)
	f.own = own
	ctx, cancel := context.WithCancel(ctx)
	synced := f.keepSynced(ctx)
	voiced := make(chan struct{})
	go func() { defer close(voiced); f.voiceChannel(ctx) }()
	defer func() { cancel(); <-synced; <-voiced }()
	return f.srv.Serve(ctx, t)
}

// keepSynced forwards the page's tools now and after every change, until
// ctx ends; the returned channel closes when it has stopped.
func (f *face) keepSynced(ctx context.Context) <-chan struct{} {
	// The page's read loop triggers changes and must never wait for a slow
	// MCP client: it only marks the list dirty, and one goroutine syncs.
	dirty := make(chan struct{}, 1)
	unsub := f.b.Subscribe(func() {
		select {
		case dirty <- struct{}{}:
		default: // a sync is pending already and will see this change too
		}
	})
	f.syncPage(ctx)
	done := make(chan struct{})
	// Under ctx's guard where there is one (a standalone bridge's face): a
	// panic ends that run with its stack logged. A face with no bridge run
	// of its own (following one, or in hub mcp) has none, and runs plainly.
	hub.Go(ctx, "stitchslop page-tools sync", func() {
		defer close(done)
		defer unsub()
		for {
			select {
			case <-ctx.Done():
				return
			case <-dirty:
				f.syncPage(ctx)
			}
		}
	})
	return done
}

// faceSeq numbers this process's MCP sessions for their agent ids.
var faceSeq atomic.Int64

func newFace(b bridgeFace, onInit func()) *face {
	f := &face{b: b, id: fmt.Sprintf("mcp-%d-%d", os.Getpid(), faceSeq.Add(1))}
	f.srv = mcpserver.New(mcpserver.Options{
		Name:                ServerName,
		Version:             Version,
		Instructions:        mcpInstructions,
		Experimental:        channelCapability(),
		ProtocolVersions:    legacyVersions,
		EchoProtocolVersion: true, // §3.2
		OnInit:              onInit,
		OnMessage:           b.agentActivity, // §2.8: every MCP message is agent activity
		UnknownTool:         f.unknownTool,
		Log:                 b.logger(),
	})
	for _, t := range bridgeTools {
		if err := f.srv.AddTool(t, f.bridgeTool(t.Name)); err != nil {
			panic(err) // a static schema of ours: a bug, not input
		}
	}
	f.fw = f.srv.Forward(mcpserver.Identity, f.pageTool)
	return f
}

// syncPage forwards the page's current tools (none when it detached).
func (f *face) syncPage(ctx context.Context) {
	tools, _ := f.b.Tools()
	if changed, _ := f.fw.Sync(ctx, mcpTools(tools)); !changed {
		// §3.3 announces every attach, revision and detach, even one that
		// leaves the tool set as it was (a page attaches before it sends
		// its list).
		f.srv.NotifyToolsChanged(ctx)
	}
}

// mcpTools renders the page's tools for registration, raw schemas kept.
func mcpTools(tools []PageTool) []*mcp.Tool {
	out := make([]*mcp.Tool, 0, len(tools))
	for _, pt := range tools {
		t := &mcp.Tool{Name: pt.Name, Title: pt.Title, Description: pt.Description, InputSchema: pt.InputSchema}
		if len(pt.Annotations) > 0 {
			var a mcp.ToolAnnotations
			if json.Unmarshal(pt.Annotations, &a) == nil {
				t.Annotations = &a
			}
		}
		out = append(out, t)
	}
	return out
}

func (f *face) bridgeTool(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return f.callTool(ctx, name, req.Params.Arguments).sdk(), nil
	}
}

// pageTool is a page tool's handler: pageCall, with the result made
// straight in the SDK's form (envelopeSDK).
func (f *face) pageTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	env, err := f.b.Call(withAgent(ctx, f.id), name, args)
	if err != nil {
		return f.callFailed(name, err).sdk(), nil
	}
	return envelopeSDK(env), nil
}

// unknownTool sends any other name to the page as a command (§3.2): the
// page may know a command it did not list, and with no page attached the
// answer is §3.5's helpful isError rather than "unknown tool".
func (f *face) unknownTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return f.pageTool(ctx, req.Params.Name, req.Params.Arguments)
}

// mcpInstructions tell the model what to do with no page (§3.2): wait,
// because the page attaches on its own; involve the user only on timeout.
const mcpInstructions = "This server drives the user's Stitch Slop tab (a browser embroidery digitizer). " +
	"The tab connects to this bridge on its own: it polls and attaches with nothing for the user to press. " +
	"If no tab is connected yet, call wait_for_connection — it blocks until the tab attaches and then shows the scene. " +
	"The page's own tools appear (tools/list_changed) once it is attached; calls go to the tab side by side. " +
	"Only if wait_for_connection times out should you involve the user, and then ask whether their Allow agent connections switch is on; " +
	"its answer (and connection_status) says whether the browser tried and why it was refused. " +
	"pair arms a one-time token the user gives you from the panel. " +
	"Files go in and out by path (call_with_file, call_to_files), never as base64 through you. " +
	"If your tool list does not show the tab's tools, call any of them through call {command, args}."
