package pixelle

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// message is one inbound /relay frame, parsed leniently enough to answer
// precisely and strictly enough that nothing malformed is routed.
type message struct {
	Type string
	// hello
	Role      string
	SessionID string
	Token     string
	// command / result
	ID string // "" when absent or not a string (see IDValid)
	// IDRaw is the id as the sender wrote it (a JSON string token): an
	// agent's id goes back in these bytes, since decoding turns a lone
	// surrogate escape into U+FFFD and the agent would miss its answer.
	IDRaw   json.RawMessage
	IDValid bool            // the id is a string of at most MaxRequestIDLen characters (idLen)
	Command json.RawMessage // a JSON object, or nil
	Result  json.RawMessage // present for a success result
	Error   json.RawMessage // present for an error result
	HasID   bool
	Problem string // why a command/result is unusable, "" if fine
}

// errMalformed marks a frame that is not a JSON object with a string type;
// the relay closes such connections with 1008.
var errMalformed = errors.New("malformed message: expected a JSON object with a string \"type\"")

// parseMessage decodes one frame. It returns errMalformed for anything that
// is not a JSON object with a string "type"; field problems of known types
// are reported in Problem so the caller can answer them.
func parseMessage(data []byte) (*message, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' || !utf8.Valid(data) {
		return nil, errMalformed
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, errMalformed
	}
	m := &message{}
	if !stringField(fields, "type", &m.Type) {
		return nil, errMalformed
	}
	switch m.Type {
	case "hello":
		okRole := stringField(fields, "role", &m.Role)
		okSess := stringField(fields, "sessionId", &m.SessionID)
		okTok := stringField(fields, "token", &m.Token)
		if !okRole || !okSess || !okTok {
			m.Problem = "hello needs string role, sessionId and token"
		}
	case "command", "result":
		if raw, ok := fields["id"]; ok {
			m.HasID = true
			var id string
			if json.Unmarshal(raw, &id) == nil && idLen(id) <= MaxRequestIDLen {
				m.ID, m.IDRaw, m.IDValid = id, bytes.TrimSpace(raw), true
			}
		}
		if !m.IDValid {
			m.Problem = "id must be a string of at most 100 characters"
			break
		}
		if m.Type == "command" {
			raw, ok := fields["command"]
			if !ok || !isObject(raw) {
				m.Problem = "command must be a JSON object"
				break
			}
			m.Command = raw
			break
		}
		m.Result, m.Error = fields["result"], fields["error"]
		if (m.Result == nil) == (m.Error == nil) {
			m.Problem = "a result carries exactly one of result or error"
		}
	}
	return m, nil
}

// stringField reads fields[key] into *dst and reports whether it was a string.
func stringField(fields map[string]json.RawMessage, key string, dst *string) bool {
	raw, ok := fields[key]
	if !ok {
		return false
	}
	return json.Unmarshal(raw, dst) == nil
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// idLen is a request id's length as the contract's "characters" count it:
// UTF-16 code units, JavaScript's length, so a Pixelle page and this relay
// agree on which ids are too long.
func idLen(id string) int {
	n := 0
	for _, r := range id {
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
	}
	return n
}
