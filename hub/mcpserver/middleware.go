package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// receive is the receiving middleware: the spec rules the SDK keeps
// differently, applied before or after its own handling.
func (s *Server) receive(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		// The SDK runs handlers on bare goroutines: a panic in one (a
		// page's tool call, say) would end the process. It ends the call.
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("mcp handler panic", "method", method, "panic", fmt.Sprint(r))
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
			}
		}()
		switch {
		case method == methodInitialize:
			res, err = next(ctx, method, req)
			if err == nil && s.opts.EchoProtocolVersion {
				echoVersion(req, res)
			}
			return res, err
		case unoffered(method):
			// The SDK serves empty prompt and resource lists even when the
			// capability is not advertised; a method of a feature we do not
			// offer is not found (JSON-RPC -32601). The SDK appends the
			// method's name to the message.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
		case method == "tools/list":
			res, err = next(ctx, method, req)
			// Reordering is safe only on a single page: a cursor names the
			// last tool of the SDK's order.
			if r, ok := res.(*mcp.ListToolsResult); ok && err == nil && r.NextCursor == "" {
				s.sortTools(r.Tools)
			}
			return res, err
		case method == "tools/call":
			return s.callTool(ctx, next, req)
		}
		return next(ctx, method, req)
	}
}

func echoVersion(req mcp.Request, res mcp.Result) {
	p, _ := req.GetParams().(*mcp.InitializeParams)
	r, _ := res.(*mcp.InitializeResult)
	if p != nil && r != nil && p.ProtocolVersion != "" {
		r.ProtocolVersion = p.ProtocolVersion
	}
}

func unoffered(method string) bool {
	for _, prefix := range []string{"prompts/", "resources/", "completion/", "logging/"} {
		if strings.HasPrefix(method, prefix) {
			return true
		}
	}
	return false
}

func (s *Server) callTool(ctx context.Context, next mcp.MethodHandler, req mcp.Request) (mcp.Result, error) {
	creq, ok := req.(*mcp.CallToolRequest)
	if !ok || creq.Params == nil {
		return next(ctx, "tools/call", req)
	}
	p := creq.Params
	if p.Name == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call needs params.name"}
	}
	// MCP's arguments is an object; the SDK hands a raw handler anything.
	if a := bytes.TrimSpace(p.Arguments); len(a) > 0 && string(a) != "null" && a[0] != '{' {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call params.arguments must be an object"}
	}
	var (
		res mcp.Result
		err error
	)
	if h := s.opts.UnknownTool; h != nil && !s.has(p.Name) {
		var r *mcp.CallToolResult
		if r, err = h(ctx, creq); r != nil {
			res = r
		}
	} else {
		res, err = next(ctx, "tools/call", req)
	}
	if r, ok := res.(*mcp.CallToolResult); ok && r != nil && err == nil {
		if r.Content == nil {
			r.Content = []mcp.Content{} // "content" is required; never null
		}
		return callResult{r}, nil
	}
	return res, err
}

// callResult always carries isError: Stitch Slop §3.2 defines the result
// as {"content": […], "isError": <bool>}, and the SDK omits a false one.
// Embedding keeps the SDK's own result methods (meta, result type).
type callResult struct{ *mcp.CallToolResult }

func (r callResult) MarshalJSON() ([]byte, error) {
	b, err := r.CallToolResult.MarshalJSON()
	if err != nil || r.IsError || len(b) < 2 || b[len(b)-1] != '}' {
		return b, err
	}
	return append(b[:len(b)-1], `,"isError":false}`...), nil
}

// dropSDKListChanged drops the SDK's own notifications/tools/list_changed.
// The SDK sends one per registry change, debounced by a 10 ms wall-clock
// timer, so one re-sync of a page's tools can become several (a pause
// between two changes) and a test cannot count them without sleeping; it
// also adds "params":{} where Stitch Slop §3.3 shows the bare form. The
// Server sends its own instead, one per change (NotifyToolsChanged), on a
// stateless client's subscription streams too (listen.go).
func dropSDKListChanged(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == methodToolsListChanged {
			return nil, nil
		}
		return next(ctx, method, req)
	}
}
