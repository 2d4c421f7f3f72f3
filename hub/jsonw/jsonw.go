// Package jsonw appends JSON values to byte slices exactly as encoding/json
// writes them with HTML escaping off, so a hand-written encoder for a hot
// path (geturl's read answer, aiui's prompt record) produces the same bytes
// as the reflective one without its reflection, buffering and copies.
package jsonw

import (
	"math/bits"
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// safe marks the ASCII bytes a JSON string carries unescaped (HTML escaping
// off): everything but the C0 controls, '"' and '\\'; safeHTML also
// escapes '<', '>' and '&', as json.Marshal does.
var safe, safeHTML = func() (t, h [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
		h[c] = t[c] && c != '<' && c != '>' && c != '&'
	}
	return t, h
}()

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special8 marks (with its high bit) each of the 8 bytes of w that is not
// plain ASCII: below 0x20, at or above 0x80, '"' or '\\'. The lowest mark is
// exact (the borrow tricks can only misreport bytes above a true mark), so
// the first byte that needs work is at TrailingZeros64/8.
func special8(w uint64) uint64 {
	q, b := w^('"'*lsb), w^('\\'*lsb)
	ctl := (w - 0x20*lsb) &^ w         // a byte below 0x20
	quo := (q - lsb) &^ q              // a zero byte in q: a '"'
	bsl := (b - lsb) &^ b              // a zero byte in b: a '\\'
	return (ctl | quo | bsl | w) & msb // w: a byte at or above 0x80
}

// html8 marks each byte of w that is '<', '>' or '&' (the same exact-lowest
// -mark trick as special8).
func html8(w uint64) uint64 {
	lt, gt, amp := w^('<'*lsb), w^('>'*lsb), w^('&'*lsb)
	return ((lt-lsb)&^lt | (gt-lsb)&^gt | (amp-lsb)&^amp) & msb
}

// String appends s as a JSON string: '"' and '\\' escaped, the C0 controls
// as \b \f \n \r \t or \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029
// as \u2028 and \u2029, everything else (including < > &) as is.
func String(dst []byte, s string) []byte {
	return append(Contents(append(dst, '"'), s), '"')
}

// StringHTML is String with '<', '>' and '&' escaped as \u003c, \u003e
// and \u0026, byte for byte what json.Marshal writes (the MCP SDK's encoder).
func StringHTML(dst []byte, s string) []byte {
	return append(contents(append(dst, '"'), s, &safeHTML), '"')
}

// Contents appends s encoded as String does, without the quotes: for a
// string spliced into a larger value piece by piece.
func Contents(dst []byte, s string) []byte { return contents(dst, s, &safe) }

func contents(dst []byte, s string, safe *[utf8.RuneSelf]bool) []byte {
	html := safe == &safeHTML
	start := 0
	for i := 0; i < len(s); {
		// Most content is plain ASCII: step over it eight bytes at a time,
		// then straight to the first byte that is not.
		if i+8 <= len(s) {
			w := load8(s, i)
			m := special8(w)
			if html {
				m |= html8(w)
			}
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		if b := s[i]; b < utf8.RuneSelf {
			if safe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// load8 reads s[i:i+8] little-endian (the compiler makes it one load).
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// Strings appends a JSON array of strings; nil is null, as encoding/json
// writes a nil slice.
func Strings(dst []byte, ss []string) []byte {
	if ss == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = String(dst, s)
	}
	return append(dst, ']')
}

// Int appends a decimal integer.
func Int[I int | int64](dst []byte, n I) []byte { return strconv.AppendInt(dst, int64(n), 10) }

// Bool appends true or false.
func Bool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}
