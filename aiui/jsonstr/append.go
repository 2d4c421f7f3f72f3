package jsonstr

import (
	"encoding/json"

	"github.com/hubdev/hub/hub/jsonw"
)

// Append appends s encoded as JSON string contents (no quotes), exactly
// as encoding/json writes them with HTML escaping off (hub/jsonw: invalid
// UTF-8 becomes U+FFFD; <, > and & stay as they are).
func Append(dst []byte, s string) []byte { return jsonw.Contents(dst, s) }

// Quote appends s as a complete JSON string.
func Quote(dst []byte, s string) []byte { return jsonw.String(dst, s) }

// Decode returns the string valid contents b denote.
func Decode(b []byte) (string, error) {
	q := make([]byte, 0, len(b)+2)
	q = append(append(append(q, '"'), b...), '"')
	var s string
	err := json.Unmarshal(q, &s)
	return s, err
}
