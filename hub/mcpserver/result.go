package mcpserver

import (
	"encoding/base64"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TextResult is a tool result of one text block.
func TextResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// ErrorResult is a failed tool call (isError) with a sentence for the model:
// a call that was well formed but could not be done is a result, not a
// JSON-RPC error, so the model can relay the fix.
func ErrorResult(text string) *mcp.CallToolResult {
	r := TextResult(text)
	r.IsError = true
	return r
}

// ParseDataURL splits data:<mime>;base64,<data> and decodes the data,
// which must be standard base64.
func ParseDataURL(url string) (mime string, data []byte, ok bool) {
	rest, found := strings.CutPrefix(url, "data:")
	if !found {
		return "", nil, false
	}
	mime, b64, found := strings.Cut(rest, ";base64,")
	if !found || mime == "" || strings.ContainsAny(mime, " ,;") || b64 == "" {
		return "", nil, false
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", nil, false
	}
	return mime, data, true
}

// ImageFromDataURL is an image block for a data URL. The block holds the
// decoded bytes and the SDK encodes them as standard base64, so for the
// canonical base64 a browser's toDataURL produces the wire carries the
// URL's own characters. (Base64 with line breaks or stray padding bits
// decodes to the same bytes and goes out canonical.)
func ImageFromDataURL(url string) (*mcp.ImageContent, bool) {
	mime, data, ok := ParseDataURL(url)
	if !ok {
		return nil, false
	}
	return &mcp.ImageContent{MIMEType: mime, Data: data}, true
}
