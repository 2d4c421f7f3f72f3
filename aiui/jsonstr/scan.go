package jsonstr

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// specials marks, in the high bit of each byte of x, the bytes JSON string
// contents cannot carry as themselves: a quote, a backslash, a control
// byte, or non-ASCII. The lowest mark is exact; borrows may add marks
// above it, which callers never look at.
func specials(x uint64) uint64 {
	return ((x - 0x20*lsb) | ((x ^ '"'*lsb) - lsb) | ((x ^ '\\'*lsb) - lsb) | x) & msb
}

// Scan validates b as the contents of a JSON string and returns the
// length in bytes of the string it decodes to (as encoding/json decodes
// it: a lone surrogate escape becomes U+FFFD). It refuses raw quotes,
// control bytes and malformed escapes, and also invalid UTF-8, which
// encoding/json would silently replace: a caller that must keep the
// exact decoded text falls back to decoding such input.
func Scan(b []byte) (decoded int, ok bool) {
	end, decoded, st := Span(b, true)
	return decoded, st == More && end == len(b)
}

// Status is how Span stopped.
type Status int

const (
	// More: b[:end] is valid contents; b[end:] is empty or, when the input
	// is not final, an escape or rune cut short that needs more bytes.
	More Status = iota
	// Closed: b[end] is the closing quote; b[:end] is valid contents.
	Closed
	// Bad: b[end] starts something JSON string contents cannot hold.
	Bad
)

// plainRunGeneric is plainRun in Go: eight bytes a step (SWAR).
func plainRunGeneric(b []byte) (i, shrink int) {
	for i+16 <= len(b) {
		x := specials(binary.LittleEndian.Uint64(b[i:]))
		if x == 0 {
			x = specials(binary.LittleEndian.Uint64(b[i+8:]))
			if x == 0 {
				i += 16
				continue
			}
			i += 8
		}
		i += bits.TrailingZeros64(x) / 8
		if b[i] != '\\' || i+1 >= len(b) || !oneLetterEscape(b[i+1]) {
			return i, shrink
		}
		i, shrink = i+2, shrink+1
	}
	return i, shrink
}

// oneLetterEscape: \c is a complete escape.
func oneLetterEscape(c byte) bool {
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	}
	return false
}

// Span scans JSON string contents from the start of b up to the closing
// quote, for input that arrives in pieces: with final unset, an escape or
// rune cut by the end of b is left for the next piece instead of refused.
//
// plainRun consumes plain text and one-letter escapes in bulk; this loop
// handles the rest a byte, rune or escape at a time. decoded is the
// encoded length minus what escapes shrink by, so plain bytes need no
// counting.
func Span(b []byte, final bool) (end, decoded int, st Status) {
	i, shrink := 0, 0
	for {
		r, s := plainRun(b[i:])
		i, shrink = i+r, shrink+s
		if i >= len(b) {
			return i, i - shrink, More
		}
		switch c := b[i]; {
		case c == '\\':
			if i+1 >= len(b) {
				return i, i - shrink, cut(final)
			}
			switch d := b[i+1]; {
			case oneLetterEscape(d):
				i, shrink = i+2, shrink+1
			case d == 'u':
				size, dec, st := unicodeEscape(b[i:], final)
				if st != More {
					return i, i - shrink, st
				}
				if size == 0 {
					return i, i - shrink, More // its low half may be in the next piece
				}
				i, shrink = i+size, shrink+size-dec
			default:
				return i, i - shrink, Bad
			}
		case c == '"':
			return i, i - shrink, Closed
		case c >= utf8.RuneSelf:
			// a run of runes here, so text in a non-Latin script does not
			// go back to plainRun once per rune
			for i < len(b) && b[i] >= utf8.RuneSelf {
				r, size := utf8.DecodeRune(b[i:])
				if r == utf8.RuneError && size <= 1 {
					if !final && !utf8.FullRune(b[i:]) {
						return i, i - shrink, More
					}
					return i, i - shrink, Bad
				}
				i += size
			}
		case c < 0x20:
			return i, i - shrink, Bad
		default: // plain, among the last bytes plainRun leaves
			i++
		}
	}
}

// unicodeEscape measures the \u escape at the start of b: its encoded
// size and the bytes it decodes to (a surrogate pair is one rune, a lone
// surrogate U+FFFD, as encoding/json decodes them). size 0 with More: the
// escape is cut by the end of a non-final piece.
func unicodeEscape(b []byte, final bool) (size, decoded int, st Status) {
	if len(b) < 6 {
		return 0, 0, cut(final)
	}
	r := hex4(b[2:])
	if r < 0 {
		return 0, 0, Bad
	}
	if !utf16.IsSurrogate(rune(r)) {
		return 6, utf8.RuneLen(rune(r)), More
	}
	if !final && len(b) < 12 {
		return 0, 0, More
	}
	if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
		if r2 := hex4(b[8:]); r2 >= 0 && utf16.DecodeRune(rune(r), rune(r2)) != utf8.RuneError {
			return 12, 4, More
		}
	}
	return 6, utf8.RuneLen(utf8.RuneError), More
}

func cut(final bool) Status {
	if final {
		return Bad
	}
	return More
}

// hex4 decodes the four hex digits at the start of b (-1 if there are
// not four).
func hex4(b []byte) int {
	if len(b) < 4 {
		return -1
	}
	r := 0
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | int(c)
	}
	return r
}

// Prefix is the longest prefix of the valid contents b, at most n bytes
// long, that ends between escapes and runes: a preview that still
// decodes.
func Prefix(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	i := 0
	for i < n {
		// plain text and one-letter escapes in bulk; an escape cut by n
		// stops the run, and the step below refuses it
		r, _ := plainRun(b[i:n])
		if i += r; i >= n {
			break
		}
		size := stepLen(b, i)
		if i+size > n {
			break
		}
		i += size
	}
	return b[:i]
}

// stepLen is the length of the byte, rune or escape at b[i].
func stepLen(b []byte, i int) int {
	switch c := b[i]; {
	case c == '\\' && i+1 < len(b) && b[i+1] == 'u':
		return 6
	case c == '\\':
		return 2
	case c >= utf8.RuneSelf:
		_, size := utf8.DecodeRune(b[i:])
		return size
	}
	return 1
}
