package terminal

// ansiStripper removes terminal escape sequences from a byte stream (colour
// and cursor control a URL reader cannot render and a model should not
// pay for): CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \), the string
// sequences DCS, SOS, PM and APC, charset designations and other two-byte
// escapes. It also drops the C0 control bytes other than tab, newline and
// carriage return (NUL, BEL, backspace, …). It keeps state across writes, so
// a sequence split between two reads is still removed. A sequence that runs
// on longer than maxEscape bytes is abandoned and what follows is text.
type ansiStripper struct {
	state ansiState
	n     int // bytes in the current sequence
}

type ansiState uint8

const (
	ansiText    ansiState = iota
	ansiEsc               // after ESC
	ansiCSI               // ESC [ parameters
	ansiStr               // OSC/DCS/SOS/PM/APC body
	ansiStrEsc            // ESC inside a string body (maybe ST)
	ansiCharset           // ESC ( and friends: one more byte
)

const maxEscape = 4096

// strip appends p without escape sequences to dst.
func (a *ansiStripper) strip(dst, p []byte) []byte {
	for _, c := range p {
		switch a.state {
		case ansiText:
			switch {
			case c == 0x1b:
				a.state, a.n = ansiEsc, 1
			case c < 0x20 && c != '\t' && c != '\n' && c != '\r', c == 0x7f:
			default:
				dst = append(dst, c)
			}
		case ansiEsc:
			a.n++
			switch c {
			case '[':
				a.state = ansiCSI
			case ']', 'P', 'X', '^', '_':
				a.state = ansiStr
			case '(', ')', '*', '+', '-', '.', '/', '#', '%':
				a.state = ansiCharset
			case 0x1b:
				a.n = 1
			default:
				a.state = ansiText
				if c < 0x20 { // a lone ESC before a newline: keep the newline
					dst = a.strip(dst, []byte{c})
				}
			}
		case ansiCSI:
			a.n++
			switch {
			case c >= 0x40 && c <= 0x7e:
				a.state = ansiText
			case c >= 0x20 && c <= 0x3f:
			default: // not part of a CSI: end it and treat c as text
				a.state = ansiText
				dst = a.strip(dst, []byte{c})
			}
		case ansiStr:
			a.n++
			switch c {
			case 0x07:
				a.state = ansiText
			case 0x1b:
				a.state = ansiStrEsc
			}
		case ansiStrEsc:
			a.n++
			if c == '\\' {
				a.state = ansiText
			} else if c != 0x1b {
				a.state = ansiStr
			}
		case ansiCharset:
			a.state = ansiText
		}
		if a.state != ansiText && a.n > maxEscape {
			a.state = ansiText
		}
	}
	return dst
}

// stripANSI removes escape sequences from a complete string.
func stripANSI(s string) string {
	var a ansiStripper
	return string(a.strip(nil, []byte(s)))
}
