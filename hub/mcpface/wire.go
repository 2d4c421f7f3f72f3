package mcpface

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json does
// (json.Marshal with escapeHTML, an Encoder without): the SDK writes
// every result through it, and a client may compare bytes.
func appendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!escapeHTML || (b != '<' && b != '>' && b != '&')) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// encoding/json escapes U+2028 and U+2029 for JSONP's sake.
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
