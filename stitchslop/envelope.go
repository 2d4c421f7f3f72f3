package stitchslop

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/hub/mcpserver"
)

// envelopeSDK is envelopeResult(env).sdk(), the result of every page tool
// call. It is made straight from the envelope's bytes when it can be:
// decoding the envelope into a map and encoding it again cost as much as
// the rest of the MCP layer's work for a call (issue 14 bounds what a
// call through `hub mcp` may cost). An envelope that is not a plain
// object (a key to escape or repeated, nesting past the SDK's limit,
// invalid JSON) takes envelopeResult; FuzzEnvelopeSDK checks both agree.
func envelopeSDK(env []byte) *mcp.CallToolResult {
	if r, ok := fastEnvelope(env); ok {
		return r
	}
	return envelopeResult(env).sdk()
}

type member struct{ key, val []byte }

// fastEnvelope renders env as envelopeResult does: the members but id
// (and a dataUrl that became an image) in encoding/json's order (keys
// sorted) and form (values compacted, HTML characters escaped), led by
// say. A member long enough to hold bulk (bulk.go) is left to
// envelopeResult.
func fastEnvelope(env []byte) (*mcp.CallToolResult, bool) {
	if !json.Valid(env) {
		return nil, false
	}
	var buf [16]member // the usual envelope fits
	ms := buf[:0]
	if !mcpserver.Members(env, func(key, val []byte) bool {
		ms = append(ms, member{key, val})
		return plainKey(key)
	}) {
		return nil, false
	}
	slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	for i := 1; i < len(ms); i++ {
		if bytes.Equal(ms[i-1].key, ms[i].key) {
			return nil, false // encoding/json keeps the last; leave it to it
		}
	}
	var (
		isError bool
		img     *mcp.ImageContent
		say     string
	)
	body := make([]byte, 0, len(env)+8)
	body = append(body, '{')
	for _, m := range ms {
		switch string(m.key) {
		case "id":
			continue
		case "ok":
			isError = string(m.val) == "false"
		case "dataUrl":
			if du, ok := jsonString(m.val); ok {
				if im, ok := mcpserver.ImageFromDataURL(du); ok {
					img = im
					continue
				}
			}
		case "say":
			say, _ = jsonString(m.val)
		}
		if len(m.val) > bulkDataURL {
			return nil, false // it may hold bulk to leave out: envelopeResult's
		}
		if len(body) > 1 {
			body = append(body, ',')
		}
		body = append(body, '"')
		body = append(body, m.key...)
		body = append(body, '"', ':')
		body = appendCompactHTML(body, m.val)
	}
	body = append(body, '}')
	text := string(body)
	if strings.TrimSpace(say) != "" {
		text = say + "\n" + text
	}
	r := &mcp.CallToolResult{IsError: isError, Content: make([]mcp.Content, 0, 2)}
	r.Content = append(r.Content, &mcp.TextContent{Text: text})
	if img != nil {
		r.Content = append(r.Content, img)
	}
	return r, true
}

// plainKey reports whether encoding/json writes key as it is: valid
// UTF-8, nothing to escape. (Members has refused keys with escapes.)
func plainKey(key []byte) bool {
	if !utf8.Valid(key) {
		return false
	}
	for i, c := range key {
		if c < 0x20 || c == '"' || c == '<' || c == '>' || c == '&' ||
			(c == 0xE2 && i+2 < len(key) && key[i+1] == 0x80 && key[i+2]&^1 == 0xA8) {
			return false
		}
	}
	return true
}

// jsonString decodes a JSON string value; false for any other value.
func jsonString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(val, '\\') < 0 && utf8.Valid(val) {
		return string(val[1 : len(val)-1]), true
	}
	var s string
	return s, json.Unmarshal(val, &s) == nil
}

const hexDigits = "0123456789abcdef"

// appendCompactHTML appends the valid JSON src as json.Marshal writes a
// json.RawMessage: without insignificant space, with <, >, &, U+2028 and
// U+2029 escaped.
func appendCompactHTML(dst, src []byte) []byte {
	start, inString := 0, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			start = i + 1
		case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[src[i+2]&0xF])
			i += 2
			start = i + 1
		case inString:
			switch c {
			case '\\':
				i++ // an escaped character is none of the above
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, src[start:i]...)
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}
