package transport

import (
	"strings"
	"unicode/utf8"
)

// Decode turns one value as written in the request-target into the text the
// agent meant: + is a space, valid %XX runs are decoded, then the ~ grammar
// applies (see the package doc for the order and why). It never fails: what
// it cannot decode it keeps verbatim.
func Decode(raw string) string {
	return DecodeTilde(DecodePercent(raw))
}

// DecodePercent applies the first two decoding steps: an unescaped + becomes
// a space and %XX escapes are decoded. A maximal run of consecutive escapes
// is decoded to bytes and kept only where those bytes are valid UTF-8; an
// escape whose byte would be invalid UTF-8 stays as its three literal
// characters, as does a % not followed by two hex digits.
func DecodePercent(raw string) string {
	if strings.IndexByte(raw, '%') < 0 && strings.IndexByte(raw, '+') < 0 {
		return raw
	}
	var b strings.Builder
	b.Grow(len(raw))
	var buf [64]byte // decoded bytes of the current %XX run, usually short
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '+':
			b.WriteByte(' ')
			i++
		case c == '%' && isEscape(raw, i):
			start := i
			run := buf[:0]
			for i < len(raw) && raw[i] == '%' && isEscape(raw, i) {
				run = append(run, unhex(raw[i+1])<<4|unhex(raw[i+2]))
				i += 3
			}
			writeRun(&b, run, raw[start:i])
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// writeRun writes the decoded bytes of one %XX run where they form valid
// UTF-8, and the original escapes (three characters per byte) where not.
func writeRun(b *strings.Builder, dec []byte, src string) {
	for j := 0; j < len(dec); {
		r, size := utf8.DecodeRune(dec[j:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteString(src[3*j : 3*j+3])
			j++
			continue
		}
		b.Write(dec[j : j+size])
		j += size
	}
}

// isEscape reports whether s[i] starts a well-formed %XX escape.
func isEscape(s string, i int) bool {
	return i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// tildeSingle maps the one-letter escapes to what they stand for.
var tildeSingle = [256]byte{
	'n': '\n', 'r': '\r', 't': '\t', 'h': '#', 'p': '%', 'q': '+', 's': ' ', 'a': '&', '~': '~',
}

// DecodeTilde applies the ~ grammar alone. Unknown or malformed escapes are
// kept verbatim: ~e9 stays ~e9, ~uD83D without a following low surrogate
// stays ~uD83D, ~u{110000} stays ~u{110000}. Only lower-case escape letters
// are escapes (~N is two literal characters).
func DecodeTilde(s string) string {
	i := strings.IndexByte(s, '~')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c != '~' {
			j := strings.IndexByte(s[i:], '~')
			if j < 0 {
				b.WriteString(s[i:])
				break
			}
			b.WriteString(s[i : i+j])
			i += j
			continue
		}
		if i+1 >= len(s) {
			b.WriteByte('~')
			break
		}
		if d := tildeSingle[s[i+1]]; d != 0 {
			b.WriteByte(d)
			i += 2
			continue
		}
		if s[i+1] == 'u' {
			if r, n := tildeUnicode(s[i:]); n > 0 {
				b.WriteRune(r)
				i += n
				continue
			}
		}
		// Not an escape: the ~ is literal and whatever follows is read
		// normally (so ~x~n is "~x" then a newline).
		b.WriteByte('~')
		i++
	}
	return b.String()
}

// tildeUnicode decodes a ~u escape at the start of s and returns the code
// point and the number of bytes it spans, or n == 0 when it is malformed.
func tildeUnicode(s string) (r rune, n int) {
	if len(s) > 3 && s[2] == '{' {
		end := strings.IndexByte(s[3:], '}')
		if end < 1 || end > 6 {
			return 0, 0
		}
		v, ok := hexValue(s[3 : 3+end])
		if !ok || v > utf8.MaxRune || isSurrogate(v) {
			return 0, 0
		}
		return rune(v), 3 + end + 1
	}
	hi, ok := codeUnit(s)
	if !ok {
		return 0, 0
	}
	switch {
	case hi >= 0xD800 && hi <= 0xDBFF:
		lo, ok := codeUnit(s[6:])
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return 0, 0
		}
		return rune(0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00)), 12
	case isSurrogate(hi):
		return 0, 0
	}
	return rune(hi), 6
}

// codeUnit reads "~uXXXX" at the start of s.
func codeUnit(s string) (uint32, bool) {
	if len(s) < 6 || s[0] != '~' || s[1] != 'u' {
		return 0, false
	}
	return hexValue(s[2:6])
}

func hexValue(h string) (uint32, bool) {
	var v uint32
	for i := 0; i < len(h); i++ {
		if !isHex(h[i]) {
			return 0, false
		}
		v = v<<4 | uint32(unhex(h[i]))
	}
	return v, true
}

func isSurrogate(v uint32) bool { return v >= 0xD800 && v <= 0xDFFF }
