package jsonstr

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/hubdev/hub/hub/jsonw"
)

// Append appends s encoded as JSON string contents (no quotes), exactly
// as encoding/json writes them with HTML escaping off (hub/jsonw: invalid
// UTF-8 becomes U+FFFD; <, > and & stay as they are).
func Append(dst []byte, s string) []byte { return jsonw.Contents(dst, s) }

// Quote appends s as a complete JSON string.
func Quote(dst []byte, s string) []byte { return jsonw.String(dst, s) }

// Decode returns the string the contents b denote. Valid contents (as
// Scan finds them, the only kind a Buffer holds) are unescaped directly
// into a string of the counted length; anything else takes encoding/json,
// with its error.
func Decode(b []byte) (string, error) {
	n, ok := Scan(b)
	if !ok {
		q := make([]byte, 0, len(b)+2)
		q = append(append(append(q, '"'), b...), '"')
		var s string
		err := json.Unmarshal(q, &s)
		return s, err
	}
	out := make([]byte, 0, n)
	for {
		k := bytes.IndexByte(b, '\\')
		if k < 0 {
			out = append(out, b...)
			break
		}
		out = append(out, b[:k]...)
		b = b[k:]
		if b[1] != 'u' {
			out = append(out, unescape[b[1]])
			b = b[2:]
			continue
		}
		r := rune(hex4(b[2:]))
		b = b[6:]
		if utf16.IsSurrogate(r) {
			r2 := rune(-1)
			if len(b) >= 6 && b[0] == '\\' && b[1] == 'u' {
				r2 = rune(hex4(b[2:]))
			}
			if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
				r, b = pair, b[6:]
			} else {
				r = utf8.RuneError
			}
		}
		out = utf8.AppendRune(out, r)
	}
	return unsafe.String(unsafe.SliceData(out), len(out)), nil
}

// unescape maps the letter of a one-letter escape to the byte it denotes.
var unescape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
