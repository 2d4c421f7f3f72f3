package intents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Limits of the canonicaliser, so hostile arguments cannot exhaust it.
const (
	// MaxCanonicalBytes bounds the JSON text CanonicalJSON accepts (a staged
	// blob is at most 160 KiB; this leaves room for the largest argument
	// object a plugin call can carry).
	MaxCanonicalBytes = 1 << 20
	// MaxDepth bounds nesting of arrays and objects.
	MaxDepth = 64
)

// Errors of the canonicaliser.
var (
	ErrNotJSON      = errors.New("not valid JSON")
	ErrInvalidUTF8  = errors.New("not valid UTF-8")
	ErrDuplicateKey = errors.New("duplicate object key")
	ErrTooDeep      = errors.New("nested too deeply")
	ErrTooLarge     = errors.New("too large")
	ErrUnsupported  = errors.New("unsupported value type")
)

// Canonical encodes a Go value as canonical JSON text: object keys sorted
// by their bytes, no insignificant whitespace, strings escaped one way
// only, and numbers kept exactly as spelled (1 and 1.0 stay different:
// collapsing two spellings could merge two different operations, while
// keeping them apart costs at most one deliberate extra execution).
//
// Supported values: nil, bool, string, int, int64, uint64, json.Number,
// json.RawMessage (canonicalised with CanonicalJSON), []string, []any,
// map[string]string and map[string]any, nested.
//
// Strings are encoded byte-preservingly: a byte that is not part of valid
// UTF-8 is written as the escape \udcXX (a lone surrogate no valid string
// can produce), so two different strings never share an encoding. That
// makes the output an identity, not always JSON a decoder gives back
// byte for byte; for valid UTF-8 it is ordinary JSON.
func Canonical(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeValue(&b, v, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func encodeValue(b *bytes.Buffer, v any, depth int) error {
	if depth > MaxDepth {
		return ErrTooDeep
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		encodeString(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case json.Number:
		if !validNumber(string(x)) {
			return fmt.Errorf("number %q: %w", string(x), ErrNotJSON)
		}
		b.WriteString(string(x))
	case json.RawMessage:
		c, err := CanonicalJSON(x)
		if err != nil {
			return err
		}
		b.Write(c)
	case []string:
		b.WriteByte('[')
		for i, s := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeString(b, s)
		}
		b.WriteByte(']')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeValue(b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]string:
		return encodeObject(b, x, func(s string) error { encodeString(b, s); return nil })
	case map[string]any:
		return encodeObject(b, x, func(v any) error { return encodeValue(b, v, depth+1) })
	default:
		return fmt.Errorf("%T: %w", v, ErrUnsupported)
	}
	return nil
}

// encodeObject writes m with its keys sorted, each value by value.
func encodeObject[V any](b *bytes.Buffer, m map[string]V, value func(V) error) error {
	b.WriteByte('{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteByte(',')
		}
		encodeString(b, k)
		b.WriteByte(':')
		if err := value(m[k]); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // byte order
	return keys
}

const hexDigits = "0123456789abcdef"

// encodeString writes s as a JSON string: ", \ and C0 controls escaped
// (\n \r \t \b \f by name, the rest as \u00XX), DEL and everything else
// valid written as is, and each byte of invalid UTF-8 as \udcXX.
func encodeString(b *bytes.Buffer, s string) {
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	start := 0 // s[start:i] is pending, written as is
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b.WriteString(s[start:i])
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&15])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(s[start:i])
			b.WriteString(`\udc`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
			i++
			start = i
			continue
		}
		i += size
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// CanonicalJSON rewrites one JSON value (a plugin's argument object, for
// example) in canonical form: the same value, keys recursively sorted,
// whitespace removed, strings re-escaped canonically ("\u0041" and "A"
// are one string), numbers as spelled. It is strict where a lenient
// reading could let two parties see different values: invalid UTF-8,
// duplicate keys, trailing data, more than MaxDepth levels or more than
// MaxCanonicalBytes are refused. For valid input the output is valid JSON
// that decodes to the same value.
func CanonicalJSON(raw []byte) ([]byte, error) {
	if len(raw) > MaxCanonicalBytes {
		return nil, ErrTooLarge
	}
	if !utf8.Valid(raw) {
		return nil, ErrInvalidUTF8
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b bytes.Buffer
	b.Grow(len(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, ErrNotJSON
	}
	if err := canonToken(&b, dec, tok, 0); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the value: %w", ErrNotJSON)
	}
	return b.Bytes(), nil
}

// canonToken writes the value starting with tok, reading the rest of it
// from dec.
func canonToken(b *bytes.Buffer, dec *json.Decoder, tok json.Token, depth int) error {
	if depth > MaxDepth {
		return ErrTooDeep
	}
	switch t := tok.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case string:
		encodeString(b, t)
	case json.Number:
		b.WriteString(string(t))
	case json.Delim:
		switch t {
		case '[':
			b.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				next, err := dec.Token()
				if err != nil {
					return ErrNotJSON
				}
				if err := canonToken(b, dec, next, depth+1); err != nil {
					return err
				}
			}
			if end, err := dec.Token(); err != nil || end != json.Delim(']') {
				return ErrNotJSON
			}
			b.WriteByte(']')
		case '{':
			return canonObject(b, dec, depth)
		default:
			return ErrNotJSON
		}
	default:
		return ErrNotJSON
	}
	return nil
}

// canonObject reads an object's members (after its '{'), canonicalises
// each value, and writes them sorted by key.
func canonObject(b *bytes.Buffer, dec *json.Decoder, depth int) error {
	type member struct {
		key string
		val []byte
	}
	var members []member
	seen := map[string]bool{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return ErrNotJSON
		}
		key, ok := kt.(string)
		if !ok {
			return ErrNotJSON
		}
		if seen[key] {
			return fmt.Errorf("%q: %w", key, ErrDuplicateKey)
		}
		seen[key] = true
		vt, err := dec.Token()
		if err != nil {
			return ErrNotJSON
		}
		var vb bytes.Buffer
		if err := canonToken(&vb, dec, vt, depth+1); err != nil {
			return err
		}
		members = append(members, member{key, vb.Bytes()})
	}
	if end, err := dec.Token(); err != nil || end != json.Delim('}') {
		return ErrNotJSON
	}
	slices.SortFunc(members, func(x, y member) int {
		switch {
		case x.key < y.key:
			return -1
		case x.key > y.key:
			return 1
		}
		return 0
	})
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		encodeString(b, m.key)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return nil
}

// validNumber reports whether s is a JSON number literal.
func validNumber(s string) bool {
	if s == "" {
		return false
	}
	return json.Valid([]byte(s)) && (s[0] == '-' || s[0] >= '0' && s[0] <= '9')
}
