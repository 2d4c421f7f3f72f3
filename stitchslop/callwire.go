package stitchslop

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/jsonw"
	"github.com/hubdev/hub/hub/mcpserver"
)

// The bytes of a call on its way through the bridge: the POST /call body
// (§4.2), the command frame to the page and the page's reply (§2.5). Each
// hot shape has a reader or writer here that produces exactly what
// encoding/json would (FuzzCallBody, FuzzCallFrame, FuzzReplyID and
// FuzzIsJSONObject compare them); anything it does not expect goes back to
// encoding/json, so an odd input is handled as before, only slower.

// callBody is the POST /call body as encoding/json decodes it.
type callBody struct {
	Command string          `json:"command"`
	Args    json.RawMessage `json:"args"`
}

// fastCallBody decodes b as json.Unmarshal(b, &callBody{}) would, for the
// body every client sends: a valid object with at most one "command" (a
// string without escapes) and one "args", and no other member. Args is a
// slice of b. false: leave b to encoding/json.
func fastCallBody(b []byte) (callBody, bool) {
	var cb callBody
	if !json.Valid(b) {
		return cb, false
	}
	var sawCommand, sawArgs bool
	ok := mcpserver.Members(b, func(key, val []byte) bool {
		switch string(key) {
		case "command":
			if sawCommand || len(val) < 2 || val[0] != '"' || !plainString(val[1:len(val)-1]) {
				return false
			}
			sawCommand, cb.Command = true, string(val[1:len(val)-1])
		case "args":
			if sawArgs {
				return false
			}
			sawArgs, cb.Args = true, val
		default:
			// encoding/json matches field names without regard to case
			// and ignores the rest: not worth doing here.
			return false
		}
		return true
	})
	return cb, ok
}

// plainString reports whether s, a JSON string's contents, decodes to
// itself: valid UTF-8 with no escape.
func plainString(s []byte) bool {
	for _, c := range s {
		if c == '\\' {
			return false
		}
	}
	return utf8.Valid(s)
}

// decodeCallBody is json.Unmarshal(b, &callBody{}), fast for the usual
// body; an empty b is a zero body, as hub.ReadJSONBody leaves it.
func decodeCallBody(b []byte) (callBody, error) {
	if cb, ok := fastCallBody(b); ok {
		return cb, nil
	}
	var cb callBody
	return cb, hub.DecodeJSONBody(b, &cb)
}

// appendCallFrame appends the command frame {id, command, args} (§2.5) as
// json.Marshal writes it from a struct of those fields, args a
// json.RawMessage: args compacted, HTML characters escaped. args must be
// valid JSON (isJSONObject).
func appendCallFrame(dst []byte, id int64, command string, args []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"command":`...)
	dst = jsonw.StringHTML(dst, command)
	dst = append(dst, `,"args":`...)
	dst = appendCompactHTML(dst, args)
	return append(dst, '}')
}

// isJSONObject reports whether b is one valid JSON value, an object: what
// decoding it into a map[string]json.RawMessage accepts with a non-nil map.
func isJSONObject(b []byte) bool {
	if !json.Valid(b) {
		return false
	}
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i < len(b) && b[i] == '{'
}

// replyID finds the id of a page frame as pageFrame's decoding does
// (a map of its members, the last "id" wins, decoded into an int64), for
// the frame a page sends most: a reply with a plain integer id. ok false:
// the frame is anything else (no id, a null or odd id, a tool list,
// invalid JSON, a key with escapes), for encoding/json to judge.
func replyID(data []byte) (id int64, ok bool) {
	if !json.Valid(data) {
		return 0, false
	}
	var raw []byte
	if !mcpserver.Members(data, func(key, val []byte) bool {
		if string(key) == "id" {
			raw = val
		}
		return true
	}) || raw == nil {
		return 0, false
	}
	for i, c := range raw {
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return 0, false // null, a string, a fraction, an exponent...
		}
	}
	id, err := strconv.ParseInt(string(raw), 10, 64)
	return id, err == nil
}
