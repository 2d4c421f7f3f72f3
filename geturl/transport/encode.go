package transport

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Encode writes s so that Decode gives back exactly s, for every valid UTF-8
// s. The choices, each made so the text survives URL readers:
//
//   - ~ + # % & and newline, carriage return, tab use the ~ grammar (~~ ~q ~h
//     ~p ~a ~n ~r ~t): they mean something to the decoder or to the URL
//     itself, and a ~ escape is plain ASCII no reader rewrites;
//   - a space is %20 (readers that rewrite it to + are harmless: + is a space);
//   - other C0 controls, DEL and the characters RFC 3986 does not allow in a
//     query (" < > \ ^ ` { | } [ ]) are %XX, upper-case hex;
//   - non-ASCII is ~uXXXX (basic plane) or ~u{XXXXX} (astral, shorter than a
//     surrogate pair), because literal non-ASCII is not reliably carried;
//   - letters, digits and - . _ ! $ ' ( ) * , / : ; = ? @ are written as is.
//
// A byte that is not part of valid UTF-8 is written %XX; Decode keeps such an
// escape literally, so invalid UTF-8 does not round-trip (agents send text).
func Encode(s string) string {
	if !needsEncoding(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	encodeTo(&b, s)
	return b.String()
}

func needsEncoding(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plain[s[i]] {
			return true
		}
	}
	return false
}

// plain marks the ASCII bytes Encode writes unchanged.
var plain = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._!$'()*,/:;=?@" {
		t[c] = true
	}
	return t
}()

// tildeEscape is the ~ escape Encode uses for a byte, when it uses one.
var tildeEscape = [256]string{
	'~': "~~", '+': "~q", '#': "~h", '%': "~p", '&': "~a", '\n': "~n", '\r': "~r", '\t': "~t",
}

const upperHex = "0123456789ABCDEF"

func encodeTo(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case plain[c]:
			b.WriteByte(c)
			i++
		case tildeEscape[c] != "":
			b.WriteString(tildeEscape[c])
			i++
		case c < utf8.RuneSelf:
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteByte('%')
				b.WriteByte(upperHex[c>>4])
				b.WriteByte(upperHex[c&15])
				i++
				continue
			}
			if r > 0xFFFF {
				b.WriteString("~u{")
				b.WriteString(strings.ToUpper(strconv.FormatInt(int64(r), 16)))
				b.WriteByte('}')
			} else {
				b.WriteString("~u")
				for shift := 12; shift >= 0; shift -= 4 {
					b.WriteByte(upperHex[(r>>shift)&15])
				}
			}
			i += size
		}
	}
}
