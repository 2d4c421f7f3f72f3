package stitchslop

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/hub/mcpserver"
)

// Mount serves one bridge's tab on an MCP server shared with other
// bridges (`hub mcp`): the page's tools under prefix (mapped by
// mcpserver.Prefix, so a dotted name becomes a portable one and says its
// original in its description) and prefix+wait_for_connection. Results,
// images included, are rendered exactly as the bridge's own face renders
// them. Follow points it at a running bridge; between bridges the page
// tools are gone and the wait tool says why.
type Mount struct {
	f      *face
	sb     *switchBridge
	waitFw *mcpserver.Forwarder // the wait tool, offered while a bridge is known
	wait   *mcp.Tool
}

// NewMount returns a mount on srv with no bridge behind it and no tools
// yet: the wait tool is offered once Follow has a bridge, and withdrawn by
// Absent, so a bridge that does not run contributes no tools.
func NewMount(srv *mcpserver.Server, prefix string, log *slog.Logger) *Mount {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Mount{sb: newSwitchBridge("", log)}
	m.f = &face{b: m.sb, srv: srv, wait: prefix + toolWait}
	wait := *bridgeTools[0]
	wait.Name = prefix + toolWait
	m.wait = &wait
	// Made first, so tools/list shows the wait tool before the page's.
	m.waitFw = srv.Forward(mcpserver.Identity, func(ctx context.Context, _ string, args json.RawMessage) (*mcp.CallToolResult, error) {
		return m.waitFor(ctx, args), nil
	})
	m.f.fw = srv.Forward(mcpserver.Prefix(prefix), m.f.pageTool)
	m.sb.set(nil, "no Stitch Slop bridge has been found yet", nil)
	return m
}

// Run keeps the page tools in step with the bridge behind the mount until
// ctx ends.
func (m *Mount) Run(ctx context.Context) { <-m.f.keepSynced(ctx) }

// Follow serves the tab of the bridge r drives, as face, until its event
// stream ends (see Remote.Events); the mount then has no bridge, for the
// reason the error gives. ready (if not nil) runs once the bridge's
// current tools are offered, or the stream ended first.
func (m *Mount) Follow(ctx context.Context, r *Remote, face string, ready func()) error {
	rf := newRemoteFace(r, m.sb.log)
	m.sb.set(rf, "", nil)
	m.waitFw.Sync(ctx, []*mcp.Tool{m.wait})
	if ready != nil {
		go func() {
			select {
			case <-rf.ready:
				// The sync loop forwards on the change; one more sync here
				// makes the tools certain to be registered when ready runs.
				m.f.syncPage(ctx)
			case <-ctx.Done():
			}
			ready()
		}()
	}
	err := rf.follow(ctx, face)
	why := "the Stitch Slop bridge on port " + itoa(r.Port) + " stopped"
	if err != nil && ctx.Err() == nil {
		why += " (" + err.Error() + ")"
	}
	m.sb.set(nil, why, nil)
	return err
}

// Absent says why no bridge is behind the mount (disabled, not running),
// and withdraws its tools. With none behind it already only the reason
// changes: no tool does, so no list_changed goes out (§3.3's "announce
// every detach" is for a bridge that goes, and none did).
func (m *Mount) Absent(why string) {
	if !m.sb.explain(why) {
		m.sb.set(nil, why, nil)
	}
	m.waitFw.Clear(context.Background())
}

// Names maps each tool the mount offers to the page's (or the bridge's)
// own name for it.
func (m *Mount) Names() map[string]string {
	out := m.f.fw.Names()
	for k, v := range m.waitFw.Names() {
		out[k] = v
	}
	return out
}

// Report is the bridge's status, or why there is none.
func (m *Mount) Report() StatusReport { return m.sb.Report() }

// waitFor is prefix+wait_for_connection: the bridge's own, once one is
// there; with none it says why at once instead of waiting on nothing.
func (m *Mount) waitFor(ctx context.Context, args json.RawMessage) *mcp.CallToolResult {
	if cur, why, _ := m.sb.current(); cur == nil {
		return mcpserver.ErrorResult("There is no Stitch Slop bridge to wait on: " + why + ". hub_status shows every bridge and why it is not running.")
	}
	return m.f.waitTool(ctx, args).sdk()
}
