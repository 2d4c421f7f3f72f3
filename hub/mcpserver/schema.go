package mcpserver

import (
	"encoding/json"
	"errors"
)

// CheckSchema returns a tool input schema the SDK will accept: absent means
// {"type":"object"}; an object without "type" gets "type":"object"; any
// other shape is refused. The SDK panics on a schema that is not an object
// schema, and MCP clients reject one, so a page's schema is checked here
// before it is registered.
func CheckSchema(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errors.New("inputSchema is not a JSON object")
	}
	typ, has := m["type"]
	if !has {
		m["type"] = json.RawMessage(`"object"`)
		b, err := json.Marshal(m)
		if err != nil {
			return nil, errors.New("inputSchema cannot be re-encoded")
		}
		return b, nil
	}
	if string(typ) != `"object"` {
		return nil, errors.New(`inputSchema type must be "object"`)
	}
	return raw, nil
}
