package stitchslop

import (
	"encoding/json"
	"fmt"

	"github.com/hubdev/hub/internal/lazyre"
)

// Tool-list limits: a page is untrusted input too.
const (
	maxTools      = 256
	maxSchemaSize = 32 << 10
	maxToolList   = 1 << 20
	// maxDropped bounds the itemised dropped-tool report (log lines,
	// /status); the rest are counted in one summary entry.
	maxDropped = 64
)

var toolNameRE = lazyre.New(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// The MCP tools the bridge provides itself (§3.4's wait, and issue 28's);
// a page may not shadow them.
const (
	toolWait         = "wait_for_connection"
	toolPair         = "pair"
	toolStatus       = "connection_status"
	toolCallWithFile = "call_with_file"
	toolCallToFiles  = "call_to_files"
	toolCall         = "call"
)

func isBridgeTool(name string) bool {
	switch name {
	case toolWait, toolPair, toolStatus, toolCallWithFile, toolCallToFiles, toolCall:
		return true
	}
	return false
}

// PageTool is one sanitised entry of the page's tool list, in MCP shape.
type PageTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// DroppedTool says why a page tool was not offered.
type DroppedTool struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// sanitizeTools validates the page's list: names must match toolNameRE and
// not shadow the bridge's tools; duplicates keep the first; schemas must be
// JSON objects of type object within maxSchemaSize; at most maxTools. raw is
// the value of the frame's "tools" key.
func sanitizeTools(raw json.RawMessage) ([]PageTool, []DroppedTool) {
	var dropped []DroppedTool
	if len(raw) > maxToolList {
		return nil, []DroppedTool{{Name: "*", Reason: fmt.Sprintf("tool list larger than %d bytes", maxToolList)}}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, []DroppedTool{{Name: "*", Reason: "tools is not an array"}}
	}
	seen := map[string]bool{}
	var tools []PageTool
	for i, item := range items {
		var t struct {
			Name        any             `json:"name"`
			Title       any             `json:"title"`
			Description any             `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			InputSnake  json.RawMessage `json:"input_schema"`
			Parameters  json.RawMessage `json:"parameters"`
			Annotations json.RawMessage `json:"annotations"`
		}
		if err := json.Unmarshal(item, &t); err != nil {
			dropped = append(dropped, DroppedTool{Name: fmt.Sprintf("#%d", i), Reason: "entry is not an object"})
			continue
		}
		name, _ := t.Name.(string)
		if name == "" {
			dropped = append(dropped, DroppedTool{Name: fmt.Sprintf("#%d", i), Reason: "missing name"})
			continue
		}
		if !toolNameRE().MatchString(name) {
			dropped = append(dropped, DroppedTool{Name: clip(name, 64), Reason: "name must match " + toolNameRE().String()})
			continue
		}
		if isBridgeTool(name) {
			dropped = append(dropped, DroppedTool{Name: name, Reason: "shadows a bridge tool"})
			continue
		}
		if seen[name] {
			dropped = append(dropped, DroppedTool{Name: name, Reason: "duplicate name (first kept)"})
			continue
		}
		if len(tools) >= maxTools {
			dropped = append(dropped, DroppedTool{Name: name, Reason: fmt.Sprintf("more than %d tools", maxTools)})
			continue
		}
		schema := firstNonNull(t.InputSchema, t.InputSnake, t.Parameters)
		schema, why := checkSchema(schema)
		if why != "" {
			dropped = append(dropped, DroppedTool{Name: name, Reason: why})
			continue
		}
		seen[name] = true
		pt := PageTool{Name: name, InputSchema: schema}
		pt.Title, _ = t.Title.(string)
		pt.Description, _ = t.Description.(string)
		if isJSONObject(t.Annotations) {
			pt.Annotations = t.Annotations
		}
		tools = append(tools, pt)
	}
	if len(dropped) > maxDropped {
		more := len(dropped) - maxDropped
		dropped = append(dropped[:maxDropped:maxDropped], DroppedTool{Name: "*", Reason: fmt.Sprintf("%d more dropped entries not listed", more)})
	}
	return tools, dropped
}

func firstNonNull(vs ...json.RawMessage) json.RawMessage {
	for _, v := range vs {
		if len(v) > 0 && string(v) != "null" {
			return v
		}
	}
	return nil
}

// checkSchema returns a usable MCP inputSchema: absent → {"type":"object"};
// an object without "type" gets type object; any other shape is refused
// (MCP clients reject non-object input schemas).
func checkSchema(s json.RawMessage) (json.RawMessage, string) {
	if len(s) == 0 {
		return json.RawMessage(`{"type":"object"}`), ""
	}
	if len(s) > maxSchemaSize {
		return nil, fmt.Sprintf("inputSchema larger than %d bytes", maxSchemaSize)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(s, &m); err != nil || m == nil {
		return nil, "inputSchema is not a JSON object"
	}
	typ, has := m["type"]
	if !has {
		m["type"] = json.RawMessage(`"object"`)
		b, err := json.Marshal(m)
		if err != nil {
			return nil, "inputSchema cannot be re-encoded"
		}
		return b, ""
	}
	if string(typ) != `"object"` {
		return nil, `inputSchema type must be "object"`
	}
	return s, ""
}
