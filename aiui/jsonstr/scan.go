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

// plainPrefix is the length of the longest prefix of b free of special
// bytes: eight bytes per step, two words per iteration.
func plainPrefix(b []byte) int {
	i := 0
	for ; i+16 <= len(b); i += 16 {
		x := specials(binary.LittleEndian.Uint64(b[i:]))
		y := specials(binary.LittleEndian.Uint64(b[i+8:]))
		if x|y != 0 {
			if x != 0 {
				return i + bits.TrailingZeros64(x)/8
			}
			return i + 8 + bits.TrailingZeros64(y)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			break
		}
	}
	return i
}

// plainPrefixString is plainPrefix for a string.
func plainPrefixString(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if m := specials(x); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			break
		}
	}
	return i
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

// Span scans JSON string contents from the start of b up to the closing
// quote, for input that arrives in pieces: with final unset, an escape or
// rune cut by the end of b is left for the next piece instead of refused.
func Span(b []byte, final bool) (end, decoded int, st Status) {
	n, i := 0, 0
	for i < len(b) {
		p := plainPrefix(b[i:])
		n, i = n+p, i+p
		if i == len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i, n, Closed
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				if !final && !utf8.FullRune(b[i:]) {
					return i, n, More
				}
				return i, n, Bad
			}
			n, i = n+size, i+size
		case c == '\\':
			if i+1 >= len(b) {
				return i, n, cut(final)
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				n, i = n+1, i+2
			case 'u':
				if len(b) < i+6 {
					return i, n, cut(final)
				}
				r := hex4(b[i+2:])
				if r < 0 {
					return i, n, Bad
				}
				if utf16.IsSurrogate(rune(r)) {
					if !final && len(b) < i+12 {
						return i, n, More // its low half may be in the next piece
					}
					if len(b) >= i+12 && b[i+6] == '\\' && b[i+7] == 'u' {
						if r2 := hex4(b[i+8:]); r2 >= 0 && utf16.DecodeRune(rune(r), rune(r2)) != utf8.RuneError {
							n, i = n+4, i+12
							continue
						}
					}
					r = utf8.RuneError
				}
				n, i = n+utf8.RuneLen(rune(r)), i+6
			default:
				return i, n, Bad
			}
		default: // a control byte
			return i, n, Bad
		}
	}
	return i, n, More
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
		size := 1
		switch c := b[i]; {
		case c == '\\' && i+1 < len(b) && b[i+1] == 'u':
			size = 6
		case c == '\\':
			size = 2
		case c >= utf8.RuneSelf:
			_, size = utf8.DecodeRune(b[i:])
		}
		if i+size > n {
			break
		}
		i += size
	}
	return b[:i]
}
