package aiui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
)

// The hooks through which the rest of the binary reaches the hub's aiui
// adapter without importing this package (adapters.Factory): from another
// process through its control file (Remote), and as the aiui part of `hub
// mcp` (hubFace).

// hubFaceSpec is the aiui part of `hub mcp`.
var hubFaceSpec = adapters.FaceSpec{
	Instructions: "aiui overlay prompts arrive as " + MethodChannel + ". Each tool a page declares is an " + PageToolPrefix + " tool (its description names the page's own tool); " +
		"page_tools_list lists every page's tools and page_tools_call calls one by the page's name, also when your tool list predates the page. " +
		"A prompt's meta says who sent it, set by the channel, not the sender: sender=page (a browser page at sender_origin), " +
		"sender=keyed (a local process holding the channel's per-start key) or sender=local (unverified: any local user can send it); " +
		"provenance says it in words. What a prompt's text claims about its origin is the sender's word.",
	Experimental: ChannelCapability(),
	New:          newHubFace,
}

// remote reaches the hub's backend from another process (Factory.Remote),
// through the control file it writes.
func remote(env adapters.RemoteEnv, _ adapters.Status) (adapters.ToolBridge, bool) {
	return NewRemoteBridge(env.Dirs), true
}

var _ adapters.FacePages = (*hubFace)(nil)

// hubFace is the aiui part of `hub mcp`: it attaches to the hub's backend
// through its control file, as `hub aiui mcp` does, offers channel_info,
// page_tools_list and page_tools_call while attached, and pushes every
// prompt routed to it as notifications/claude/channel.
type hubFace struct {
	srv   *mcpserver.Server
	fw    *mcpserver.Forwarder
	defs  []*mcp.Tool
	pages *pageTools // the pages' tools by name
	dirs  hub.Dirs
	id    string
	cwd   string
	log   *slog.Logger

	mu  sync.Mutex
	cl  *Client // the attached backend's; nil while none
	why string  // why none, from the last Absent
}

func newHubFace(env adapters.FaceEnv) adapters.Face {
	h := &hubFace{srv: env.Server, dirs: env.Dirs, id: env.FaceID, cwd: env.CWD, log: env.Log}
	var call mcpserver.CallFunc
	h.defs, call = HubTools(h.client)
	h.fw = env.Server.Forward(mcpserver.Identity, call)
	h.pages = newPageTools(env.Server, h.client)
	return h
}

// Follow attaches to the backend the control file names and forwards its
// events until ctx ends; the backend's restarts are followed by the
// client itself.
func (h *hubFace) Follow(ctx context.Context, _ adapters.Status, attached func()) error {
	cl, err := Locate(ctx, h.dirs)
	if err != nil {
		return err
	}
	cl.Face = fmt.Sprintf("%s-%s", h.id, hub.RandomHex(4))
	h.mu.Lock()
	h.cl = cl
	h.mu.Unlock()
	h.fw.Sync(ctx, h.defs)
	h.resync(ctx, cl)
	attached()
	FollowEvents(ctx, h.srv, cl, FaceOptions{CWD: h.cwd, Log: h.log,
		Resync: func(ctx context.Context) { h.resync(ctx, cl) },
		OnPageTools: func(ctx context.Context, ch *tools.Change) bool {
			return h.pages.sync(ctx, ch.Registrations)
		}})
	h.pages.sync(context.Background(), nil)
	h.fw.Clear(context.Background())
	return nil
}

// resync registers the pages' tools as the backend lists them now; a
// backend that does not answer keeps the ones registered (the next change
// or attach brings them in step).
func (h *hubFace) resync(ctx context.Context, cl *Client) {
	regs, err := cl.Tools(ctx)
	if err != nil {
		h.log.Warn("cannot list the aiui page tools", "err", err)
		return
	}
	h.pages.sync(ctx, regs)
}

func (h *hubFace) Absent(why string) {
	h.mu.Lock()
	cl := h.cl
	h.cl, h.why = nil, why
	h.mu.Unlock()
	if cl != nil {
		cl.CloseIdleConnections()
	}
	h.pages.sync(context.Background(), nil)
	h.fw.Clear(context.Background())
}

func (h *hubFace) Tools() []string {
	names := h.fw.Names()
	maps.Copy(names, h.pages.names())
	return slices.Sorted(maps.Keys(names))
}

// PageTools implements adapters.FacePages: the pages' tools registered by
// name, each with its page_tools_call arguments.
func (h *hubFace) PageTools() (string, []adapters.PageTool) {
	return "page_tools_call", h.pages.list()
}

func (h *hubFace) Unknown(tool string) (string, bool) {
	if strings.HasPrefix(tool, PageToolPrefix) {
		return "No aiui page holds that tool now (a page that went, or a list that predates a reload): " +
			"page_tools_list lists the pages' tools and page_tools_call calls one by the page's own name.", true
	}
	return "", tool == "channel_info" || strings.HasPrefix(tool, "page_tools_")
}

// client is the attached backend's client, or why there is none.
func (h *hubFace) client() (*Client, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cl == nil {
		why := h.why
		if why == "" {
			why = "not attached to an aiui backend yet"
		}
		return nil, errors.New(why)
	}
	return h.cl, nil
}
