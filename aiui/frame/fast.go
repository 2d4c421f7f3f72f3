package frame

// decodeFast decodes the headers every data frame of a text thread
// carries ({"v":1,"kind":"data","threadId":"t","fin":true}, keys in any
// order, JSON whitespace anywhere) without encoding/json's reflection,
// which cost a few percent of the CPU per 64 KiB frame. It takes only
// v, kind, format, threadId and fin, each at most once, with plain
// strings (no escapes), an integer v and a true/false fin; ok is false
// for anything else (meta, chunk, nulls, escapes, other keys, a duplicate,
// invalid JSON), which encoding/json then decodes, so the two never
// disagree (FuzzDecodeFast). hdr is valid UTF-8 (Decode checked).
func decodeFast(hdr []byte, env *Envelope) (ok bool) {
	p := fastParser{b: hdr}
	if !p.byte('{') {
		return false
	}
	var seen uint8
	if p.byte('}') {
		return p.end()
	}
	for {
		key, ok := p.str()
		if !ok || !p.byte(':') {
			return false
		}
		var bit uint8
		switch key {
		case "v":
			bit = 1
			env.V, ok = p.int()
		case "kind":
			bit = 2
			env.Kind, ok = p.str()
		case "format":
			bit = 4
			env.Format, ok = p.str()
		case "threadId":
			bit = 8
			env.ThreadID, ok = p.str()
		case "fin":
			bit = 16
			env.Fin, ok = p.bool()
		}
		if bit == 0 || !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if p.byte('}') {
			return p.end()
		}
		if !p.byte(',') {
			return false
		}
	}
}

type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte consumes c (after whitespace) if it comes next.
func (p *fastParser) byte(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// end: nothing but whitespace is left.
func (p *fastParser) end() bool {
	p.space()
	return p.i == len(p.b)
}

// str reads a string without escapes or control bytes.
func (p *fastParser) str() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	start := p.i
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			s := string(p.b[start:p.i])
			p.i++
			return s, true
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}

// int reads a JSON integer of at most 9 digits (no int overflows).
func (p *fastParser) int() (int, bool) {
	p.space()
	neg := p.i < len(p.b) && p.b[p.i] == '-'
	if neg {
		p.i++
	}
	start, n := p.i, 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		n = n*10 + int(p.b[p.i]-'0')
		p.i++
	}
	digits := p.i - start
	if digits == 0 || digits > 9 || digits > 1 && p.b[start] == '0' {
		return 0, false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func (p *fastParser) bool() (bool, bool) {
	p.space()
	switch {
	case len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "true":
		p.i += 4
		return true, true
	case len(p.b)-p.i >= 5 && string(p.b[p.i:p.i+5]) == "false":
		p.i += 5
		return false, true
	}
	return false, false
}
