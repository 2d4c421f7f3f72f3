package aiui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpface"
)

// Notification methods the MCP face sends.
const (
	MethodChannel          = "notifications/claude/channel"
	MethodToolsListChanged = "notifications/tools/list_changed"
)

// FaceOptions configure the MCP face.
type FaceOptions struct {
	// NotifyPageTools pushes page-tools changes over the channel too
	// (kind "page-tools"); list_changed is always sent.
	NotifyPageTools bool
	// CWD is the face's working directory, used to route prompts.
	CWD string
	Log *slog.Logger
	// OnInitialized runs once the MCP client announced itself (initialize,
	// or a stateless client's first request); the in-process backend uses
	// it to mark itself owned.
	OnInitialized func()
	// Version is reported in serverInfo.
	Version string
}

// CallInput is page_tools_call's input.
type CallInput struct {
	Name     string `json:"name" jsonschema:"the page tool's name"`
	Args     any    `json:"args,omitempty" jsonschema:"the tool's arguments (an object matching its inputSchema)"`
	NS       string `json:"ns,omitempty" jsonschema:"narrow to this page namespace"`
	ClientID string `json:"clientId,omitempty" jsonschema:"narrow to this /tools connection"`
}

type empty struct{}

func textResult(v any) *mcp.CallToolResult {
	b, _ := json.MarshalIndent(v, "", "  ")
	return mcpface.TextResult(string(b))
}

func errResult(msg string) *mcp.CallToolResult { return mcpface.ErrorResult(msg) }

// NewFaceServer builds the MCP server for a face bound to cl. onReady runs
// once the client may take notifications.
func NewFaceServer(cl *Client, o FaceOptions, onReady func()) *mcpface.Server {
	srv := mcpface.New(mcpface.Options{
		Name:    "aiui-claude-channel",
		Version: o.Version,
		Instructions: "Prompts from the aiui browser overlay arrive as notifications/claude/channel. " +
			"Page tools the browser page declares are listed by page_tools_list and called with page_tools_call.",
		Experimental: map[string]any{"claude/channel": map[string]any{}},
		OnInit:       o.OnInitialized,
		OnReady:      onReady,
		Log:          o.Log,
	})
	// Page tools stay behind page_tools_list/page_tools_call (the spec's
	// "Not yet: per-tool MCP registration"), so the tool list is static;
	// tools/list shows it in this order.
	mcpface.AddTool(srv, &mcp.Tool{Name: "channel_info", Description: "The aiui channel backend: port, pid, generation, page-tools summary, attached faces, pending prompts."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			info, err := cl.Info(ctx)
			if err != nil {
				return errResult(err.Error()), nil, nil
			}
			return textResult(info), nil, nil
		})
	mcpface.AddTool(srv, &mcp.Tool{Name: "channel_reload", Description: "Reload the channel's lowering layer in place: rebuild the format registry, drop every /ws and /tools socket (1012), bump the generation."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			res, err := cl.Reload(ctx)
			if err != nil {
				return errResult(err.Error()), nil, nil
			}
			return textResult(res), nil, nil
		})
	mcpface.AddTool(srv, &mcp.Tool{Name: "page_tools_call", Description: "Call a page tool. Routed to the one page holding it (the active tab wins a tie); when ambiguous the error lists candidates — retry with ns and/or clientId."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in CallInput) (*mcp.CallToolResult, any, error) {
			var args json.RawMessage
			if in.Args != nil {
				args, _ = json.Marshal(in.Args)
			}
			res, err := cl.Call(ctx, tools.CallRequest{Name: in.Name, Args: args, NS: in.NS, ClientID: in.ClientID})
			if err != nil {
				return errResult(err.Error()), nil, nil
			}
			if !res.OK {
				return errResult(callErrorText(res)), nil, nil
			}
			return mcpface.TextResult(string(res.Value)), nil, nil
		})
	mcpface.AddTool(srv, &mcp.Tool{Name: "page_tools_list", Description: "List the tools browser pages registered on /tools: clientId, ns, url, tab, hash, tools, activeTab."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			regs, err := cl.Tools(ctx)
			if err != nil {
				return errResult(err.Error()), nil, nil
			}
			return textResult(nonNil(regs)), nil, nil
		})
	return srv
}

// callErrorText renders a failed call; a routing error's text already
// lists the candidates.
func callErrorText(res CallResult) string { return res.Error }

// RunFace serves the MCP face on t until the client goes away or ctx is
// done. Once the client may take notifications it attaches to the
// backend's event stream and turns every routed prompt into
// notifications/claude/channel and every page-tools change into
// list_changed (plus a kind "page-tools" push).
func RunFace(ctx context.Context, t mcp.Transport, cl *Client, o FaceOptions) error {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if cl.Face == "" {
		cl.Face = fmt.Sprintf("mcp-%d-%s", os.Getpid(), hub.RandomHex(4))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		srv  *mcpface.Server
		once sync.Once
		wg   sync.WaitGroup
	)
	defer wg.Wait()
	onReady := func() {
		once.Do(func() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pumpEvents(ctx, srv, cl, o)
			}()
		})
	}
	srv = NewFaceServer(cl, o, onReady)
	_, err := srv.Serve(ctx, t)
	cancel()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// pumpEvents keeps the face attached, re-attaching with backoff when the
// backend restarts.
func pumpEvents(ctx context.Context, srv *mcpface.Server, cl *Client, o FaceOptions) {
	backoff := 200 * time.Millisecond
	for ctx.Err() == nil {
		err := cl.Events(ctx, o.CWD, func(ev FaceEvent) error {
			switch ev.Type {
			case "prompt":
				return srv.Notify(ctx, MethodChannel, map[string]any{"content": ev.Prompt.Text, "meta": ev.Prompt.Meta})
			case "page-tools":
				if o.NotifyPageTools {
					if err := srv.Notify(ctx, MethodChannel, map[string]any{"content": ev.PageTools.Text, "meta": map[string]string{"kind": "page-tools"}}); err != nil {
						return err
					}
				}
				// The advertised tools are static; the notification's value
				// is the client's refresh cycle (the spec's change signal).
				return srv.NotifyToolsChanged(ctx)
			}
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		o.Log.Warn("lost the aiui backend event stream; retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}
