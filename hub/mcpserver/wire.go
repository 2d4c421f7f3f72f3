package mcpserver

import (
	"encoding/base64"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/hub/jsonw"
)

// appendCallResult appends r as the SDK path puts it on the wire (see
// callResult): the SDK's own field order and string escaping, "content"
// never null, "isError" always said. Text and image blocks without _meta
// or annotations, which is what a page's tools answer with, are written
// straight into buf; any other result goes through the SDK's encoder. It
// exists because that encoder marshals every block, the result and then
// the message each once more (a base64 image is copied five times).
func appendCallResult(buf []byte, r *mcp.CallToolResult) ([]byte, error) {
	if r == nil {
		return append(buf, "null"...), nil // a nil *CallToolResult marshals so
	}
	if !plainResult(r) {
		if r.Content == nil {
			r.Content = []mcp.Content{}
		}
		b, err := callResult{r}.MarshalJSON()
		return append(buf, b...), err
	}
	buf = append(buf, `{"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			buf = append(buf, ',')
		}
		switch c := c.(type) {
		case *mcp.TextContent:
			buf = append(buf, `{"type":"text","text":`...)
			buf = appendString(buf, c.Text, true)
		case *mcp.ImageContent:
			buf = append(buf, `{"type":"image","mimeType":`...)
			buf = appendString(buf, c.MIMEType, true)
			buf = append(buf, `,"data":"`...)
			buf = base64.StdEncoding.AppendEncode(buf, c.Data)
			buf = append(buf, '"')
		}
		buf = append(buf, '}')
	}
	if r.IsError {
		return append(buf, `],"isError":true}`...), nil
	}
	return append(buf, `],"isError":false}`...), nil
}

// plainResult reports whether appendCallResult can write r itself: no
// field but content and isError, and only bare text and image blocks.
func plainResult(r *mcp.CallToolResult) bool {
	if r.Meta != nil || r.StructuredContent != nil || r.InputRequests != nil || r.RequestState != "" {
		return false
	}
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			if c == nil || c.Meta != nil || c.Annotations != nil {
				return false
			}
		case *mcp.ImageContent:
			if c == nil || c.Meta != nil || c.Annotations != nil {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// appendID appends a request id as the SDK's jsonrpc2 encoder writes it:
// an integer, or a string without HTML escaping.
func appendID(buf []byte, id jsonrpc.ID) []byte {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(buf, v, 10)
	case string:
		return appendString(buf, v, false)
	}
	return append(buf, "null"...)
}

// appendString appends s as a JSON string exactly as encoding/json does
// (json.Marshal with escapeHTML, an Encoder without): the SDK writes
// every result through it, and a client may compare bytes.
func appendString(dst []byte, s string, escapeHTML bool) []byte {
	if escapeHTML {
		return jsonw.StringHTML(dst, s)
	}
	return jsonw.String(dst, s)
}
