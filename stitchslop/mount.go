package stitchslop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
)

// Mount serves one bridge's tab on an MCP server shared with other
// bridges (`hub mcp`): the page's tools under prefix (mapped by
// mcpserver.Prefix, so a dotted name becomes a portable one and says its
// original in its description) and prefix+wait_for_connection. Results,
// images included, are rendered exactly as the bridge's own face renders
// them. Follow points it at a running bridge; between bridges the page
// tools are gone and the bridge's own tools say why.
type Mount struct {
	f      *face
	sb     *switchBridge
	ownFw  *mcpserver.Forwarder // the bridge's own tools, offered while a bridge is known
	own    []*mcp.Tool          // those tools, prefixed
	prefix string

	ownMu  sync.Mutex // held while a bridge of the mount's own starts
	mu     sync.Mutex
	runCtx context.Context // Run's: a bridge of the mount's own lives as long
	leader *Remote         // the bridge Follow follows now (its site and config dir)
	mine   *Server         // the mount's own bridge (ownBridge), nil while it follows
}

// NewMount returns a mount on srv with no bridge behind it and no tools
// yet: the bridge's own tools (prefix+wait_for_connection, pair,
// connection_status, call_with_file, call_to_files) are offered once
// Follow has a bridge, and withdrawn by Absent, so a bridge that does not
// run contributes no tools.
func NewMount(srv *mcpserver.Server, prefix string, log *slog.Logger) *Mount {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Mount{sb: newSwitchBridge("", log), prefix: prefix}
	m.f = &face{b: m.sb, srv: srv, prefix: prefix, id: "mount-" + itoa(os.Getpid())}
	m.f.own = m.openOwn
	for _, t := range bridgeTools {
		pt := *t
		pt.Name = prefix + t.Name
		m.own = append(m.own, &pt)
	}
	// Made first, so tools/list shows the bridge's tools before the page's.
	m.ownFw = srv.Forward(mcpserver.Identity, func(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
		return m.bridgeTool(ctx, strings.TrimPrefix(name, prefix), args), nil
	})
	m.f.fw = srv.Forward(mcpserver.Prefix(prefix), m.f.pageTool)
	m.sb.set(nil, "no Stitch Slop bridge has been found yet", nil)
	return m
}

// Run keeps the page tools in step with the bridge behind the mount until
// ctx ends.
func (m *Mount) Run(ctx context.Context) {
	m.mu.Lock()
	m.runCtx = ctx
	m.mu.Unlock()
	synced := m.f.keepSynced(ctx)
	m.f.voiceChannel(ctx) // the user's voice, pushed as channel events
	<-synced
}

// Follow serves the tab of the bridge r drives, as face, until its event
// stream ends (see Remote.Events); the mount then has no bridge, for the
// reason the error gives. ready (if not nil) runs once the bridge's
// current tools are offered, or the stream ended first.
func (m *Mount) Follow(ctx context.Context, r *Remote, face string, ready func()) error {
	r.setAgent(face)
	m.mu.Lock()
	m.leader = r
	mine := m.mine
	m.mu.Unlock()
	if mine != nil {
		// The mount drives a bridge of its own (ownBridge): the one found
		// is only where a later own bridge takes its site from.
		m.ownFw.Sync(ctx, m.own)
		if ready != nil {
			ready()
		}
		<-ctx.Done()
		return nil
	}
	rf := newRemoteFace(r, m.sb.log)
	m.sb.set(rf, "", nil)
	m.ownFw.Sync(ctx, m.own)
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
	m.sb.setIf(rf, true, nil, why, nil) // unless ownBridge replaced it meanwhile
	return err
}

// openOwn is wait_for_connection's ownBridge under `hub mcp`: a bridge of
// the mount's own, in this process, for the site and config dir of the
// bridge it follows, on the next free port (a second tab walks on to it
// from the first tab's bridge, which refuses it busy, §2.6). It runs until
// Run's context ends, owned by the MCP client (no idle rules).
func (m *Mount) openOwn(ctx context.Context) (opened bool, err error) {
	m.ownMu.Lock()
	defer m.ownMu.Unlock()
	m.mu.Lock()
	mine, leader, runCtx := m.mine, m.leader, m.runCtx
	m.mu.Unlock()
	if mine != nil {
		return false, nil
	}
	if leader == nil || runCtx == nil {
		return false, errors.New("no Stitch Slop bridge is known yet to take the site and config dir from; call wait_for_connection first")
	}
	srv, err := New(&Config{Origin: leader.Origin, ConfigDir: leader.dir, Ports: ownBridgePorts})
	if err != nil {
		return false, err
	}
	lc := hub.NewLifecycle(hub.IdleRules{})
	lc.Own()
	run, err := adapters.Standalone{Name: "stitchslop", Adapter: srv, Log: m.sb.log, Lifecycle: lc}.Start(runCtx)
	if err != nil {
		return false, fmt.Errorf("no bridge of this face's own could start: %w", err)
	}
	msg := fmt.Sprintf("This face runs a bridge of its own on port %d, for a second tab (the bridge on port %d keeps the first): the tab dials %s in order, is refused busy there and attaches here.",
		srv.Port(), leader.Port, hub.FormatPorts(DefaultPorts))
	m.mu.Lock()
	m.mine = srv
	m.mu.Unlock()
	m.sb.set(srv, "", &FaceReport{Mode: "own-bridge", LeaderPort: leader.Port, LeaderPID: leader.PID, Message: msg})
	m.sb.log.Info("runs a Stitch Slop bridge of its own for a second tab", "port", srv.Port(), "followed", leader.Port)
	go func() {
		err := run.Wait()
		m.mu.Lock()
		m.mine = nil
		m.mu.Unlock()
		why := "this face's own Stitch Slop bridge stopped"
		if err != nil {
			why += " (" + err.Error() + ")"
		}
		m.sb.setIf(srv, true, nil, why, nil)
	}()
	return true, nil
}

// Absent says why no bridge is behind the mount (disabled, not running),
// and withdraws its tools. With none behind it already only the reason
// changes: no tool does, so no list_changed goes out (§3.3's "announce
// every detach" is for a bridge that goes, and none did).
func (m *Mount) Absent(why string) {
	m.mu.Lock()
	mine := m.mine
	m.mu.Unlock()
	if mine != nil {
		return // the mount drives a bridge of its own, which is there
	}
	if !m.sb.explain(why) {
		m.sb.set(nil, why, nil)
	}
	m.ownFw.Clear(context.Background())
}

// Names maps each tool the mount offers to the page's (or the bridge's)
// own name for it.
func (m *Mount) Names() map[string]string {
	out := m.f.fw.Names()
	for k, v := range m.ownFw.Names() {
		out[k] = v
	}
	return out
}

// Report is the bridge's status, or why there is none.
func (m *Mount) Report() StatusReport { return m.sb.Report() }

// bridgeTool is one of the bridge's own tools (name unprefixed): the
// bridge's, once one is there; with none, connection_status says why and
// the others say so at once instead of waiting on nothing.
func (m *Mount) bridgeTool(ctx context.Context, name string, args json.RawMessage) *mcp.CallToolResult {
	if cur, why, _ := m.sb.current(); cur == nil && name != toolStatus {
		return mcpserver.ErrorResult("There is no Stitch Slop bridge to use: " + why + ". hub_status shows every bridge and why it is not running.")
	}
	return m.f.callTool(ctx, name, args).sdk()
}
