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
// are reported in Problem so the caller can answer them. The message's
// byte fields (IDRaw, Command, Result, Error) are its own: data may be
// reused once parseMessage returns.
//
// It reads exactly what decoding data into a map[string]json.RawMessage
// would (the last of duplicate keys wins, escaped keys are decoded, a null
// string field reads as ""), in one validating scan and one walk of the
// object's top level instead of a reflective decode that allocates every
// member.
func parseMessage(data []byte) (*message, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' || !utf8.Valid(data) || !json.Valid(data) {
		return nil, errMalformed
	}
	data = bytes.Clone(data)
	var f fields
	f.scan(data)
	m := &message{}
	if !typeField(f.typ, &m.Type) {
		return nil, errMalformed
	}
	switch m.Type {
	case "hello":
		okRole := stringField(f.role, &m.Role)
		okSess := stringField(f.sessionID, &m.SessionID)
		okTok := stringField(f.token, &m.Token)
		if !okRole || !okSess || !okTok {
			m.Problem = "hello needs string role, sessionId and token"
		}
	case "command", "result":
		if f.id != nil {
			m.HasID = true
			var id string
			if stringField(f.id, &id) && idLen(id) <= MaxRequestIDLen {
				m.ID, m.IDRaw, m.IDValid = id, f.id, true
			}
		}
		if !m.IDValid {
			m.Problem = "id must be a string of at most 100 characters"
			break
		}
		if m.Type == "command" {
			if !isObject(f.command) {
				m.Problem = "command must be a JSON object"
				break
			}
			m.Command = f.command
			break
		}
		m.Result, m.Error = f.result, f.error
		if (m.Result == nil) == (m.Error == nil) {
			m.Problem = "a result carries exactly one of result or error"
		}
	}
	return m, nil
}

// fields are the members of a frame the relay reads, each the bytes of
// its value (nil when absent).
type fields struct {
	typ, role, sessionID, token, id, command, result, error []byte
}

// set records one member; a later one of the same name replaces it.
func (f *fields) set(key, val []byte) {
	var dst *[]byte
	switch string(key) {
	case "type":
		dst = &f.typ
	case "role":
		dst = &f.role
	case "sessionId":
		dst = &f.sessionID
	case "token":
		dst = &f.token
	case "id":
		dst = &f.id
	case "command":
		dst = &f.command
	case "result":
		dst = &f.result
	case "error":
		dst = &f.error
	default:
		return
	}
	*dst = val
}

// scan sets f from each member of the JSON object data in order: its key,
// unquoted and unescaped, and its value's bytes. data must be a valid JSON
// object (json.Valid, starting with '{'); the walk relies on it and checks
// nothing.
func (f *fields) scan(data []byte) {
	i := skipSpace(data, 1)
	if data[i] == '}' {
		return
	}
	for {
		end := stringEnd(data, i)
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			json.Unmarshal(data[i:end], &s) // valid, so it cannot fail
			key = []byte(s)
		}
		i = skipSpace(data, skipSpace(data, end)+1) // past the ':'
		end = valueEnd(data, i)
		f.set(key, data[i:end])
		i = skipSpace(data, end)
		if data[i] == '}' {
			return
		}
		i = skipSpace(data, i+1) // past the ','
	}
}

// skipSpace is the index of the first byte at or after i that is not JSON
// whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd is the index just past the string whose opening quote is at i.
func stringEnd(data []byte, i int) int {
	for i++; ; i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

// valueEnd is the index just past the value that starts at i.
func valueEnd(data []byte, i int) int {
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch data[i] {
			case '"':
				i = stringEnd(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(data) { // a number, true, false or null
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// typeField is stringField for the type, without a copy for the types the
// relay knows.
func typeField(raw []byte, dst *string) bool {
	for _, t := range [...]string{"command", "result", "hello", "pair.create", "revoke"} {
		if len(raw) == len(t)+2 && raw[0] == '"' && string(raw[1:len(raw)-1]) == t {
			*dst = t
			return true
		}
	}
	return stringField(raw, dst)
}

// stringField reads a member's value into *dst as encoding/json would and
// reports whether it could: a string, or null (which leaves *dst alone).
func stringField(raw []byte, dst *string) bool {
	switch {
	case raw == nil:
		return false
	case string(raw) == "null":
		return true
	case raw[0] != '"':
		return false
	case bytes.IndexByte(raw, '\\') < 0:
		*dst = string(raw[1 : len(raw)-1])
		return true
	}
	var s string // here, so that only an escaped string costs an allocation
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	*dst = s
	return true
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
