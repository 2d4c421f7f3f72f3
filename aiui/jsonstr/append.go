package jsonstr

import (
	"encoding/json"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Append appends s encoded as JSON string contents (no quotes). Like
// encoding/json it replaces invalid UTF-8 with U+FFFD; unlike it, it
// leaves <, >, & and U+2028/U+2029 as they are (valid JSON, and nothing
// here is embedded in HTML or JavaScript source).
func Append[T ~string | ~[]byte](dst []byte, s T) []byte {
	for len(s) > 0 {
		var p int
		if str, ok := any(s).(string); ok {
			p = plainPrefixString(str)
		} else {
			p = plainPrefix([]byte(s))
		}
		dst = append(dst, s[:p]...)
		s = s[p:]
		if len(s) == 0 {
			break
		}
		c := s[0]
		if c >= utf8.RuneSelf {
			var r rune
			var size int
			if str, ok := any(s).(string); ok {
				r, size = utf8.DecodeRuneInString(str)
			} else {
				r, size = utf8.DecodeRune([]byte(s))
			}
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, s[:size]...)
			}
			s = s[size:]
			continue
		}
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		s = s[1:]
	}
	return dst
}

// Quote appends s as a complete JSON string.
func Quote(dst []byte, s string) []byte {
	dst = append(dst, '"')
	return append(Append(dst, s), '"')
}

// Decode returns the string valid contents b denote.
func Decode(b []byte) (string, error) {
	q := make([]byte, 0, len(b)+2)
	q = append(append(append(q, '"'), b...), '"')
	var s string
	err := json.Unmarshal(q, &s)
	return s, err
}
