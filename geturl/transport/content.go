package transport

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hubdev/hub/geturl/fault"
)

// The compatibility form content=<base64url(JSON)> carries a tool's
// parameters as one JSON object. Its decoder is strict (the contract's
// words: canonical base64url, valid JSON, known fields for the selected
// tool, no conflicting aliases) and bounded before it allocates in
// proportion to its input.
const (
	// MaxContentJSON bounds the decoded JSON (base64 of a whole
	// MaxTarget-sized request is 9 KiB).
	MaxContentJSON = 9 << 10
	// MaxContentFields bounds the object's keys.
	MaxContentFields = 32
	// MaxContentValues bounds the values of all keys together, array
	// elements counted one by one.
	MaxContentValues = 64
	// maxContentKey bounds one key: parameter names are short.
	maxContentKey = 32
)

// CodeInvalidContent refuses a content= value that is not canonical
// base64url of one JSON object of the accepted shape.
const CodeInvalidContent = "invalid_content"

// Field is one key of a content= object with its values in order: a
// scalar gives one value, an array one per element.
type Field struct {
	Key    string
	Values []string
}

// Content is a decoded content= object: its fields in the order written
// (the raw key excepted) and the raw tail it carries, if any.
type Content struct {
	Fields []Field
	Raw    string
	HasRaw bool
}

// DecodeContent decodes a content= value (already decoded as a parameter
// value) strictly: canonical unpadded base64url (RFC 4648 §5, no padding,
// zero trailing bits: re-encoding gives the same text), valid UTF-8 JSON
// holding exactly one object, no duplicate keys, keys that are parameter
// names ([A-Za-z][A-Za-z0-9_]*), values that are strings, numbers,
// booleans or non-empty arrays of those; no null, no nested object, no \u
// escape of a lone surrogate (encoding/json would silently turn it into
// U+FFFD). The key "raw" is the raw tail and must be a string. Which keys
// the selected tool knows, and whether two of them are aliases of one
// parameter, is for Bind: Target turns the object into the request the
// compact route would get.
func DecodeContent(s string) (*Content, *Error) {
	bad := func(detail, hint string) (*Content, *Error) {
		return nil, &Error{Code: CodeInvalidContent, Detail: detail, Hint: hint, Retryable: true, Action: fault.ActionCorrectRequest}
	}
	const b64hint = "content= is unpadded base64url (A-Z a-z 0-9 - _) of a JSON object"
	if base64.RawURLEncoding.DecodedLen(len(s)) > MaxContentJSON {
		return bad("content= decodes to more than "+strconv.Itoa(MaxContentJSON)+" bytes", "stage large content with /s and reference it with blob=")
	}
	if s == "" {
		return bad("content= is empty", b64hint)
	}
	for i := 0; i < len(s); i++ {
		if !isB64URL(s[i]) {
			return bad("content= has "+strconv.QuoteRune(rune(s[i]))+" at byte "+strconv.Itoa(i)+", outside unpadded base64url", b64hint)
		}
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return bad("content= is not canonical base64url", b64hint)
	}
	if !utf8.Valid(raw) {
		return bad("content= JSON is not valid UTF-8", "encode the JSON as UTF-8 before base64url")
	}
	if !json.Valid(raw) {
		return bad("content= is not valid JSON", "content= carries one JSON object")
	}
	if loneSurrogate(raw) {
		return bad("content= JSON escapes a lone surrogate", "write \\uD83D\\uDE00 pairs, or the character itself")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		return bad("content= JSON is not an object", "content= carries one JSON object of the tool's parameters")
	}
	c := &Content{}
	seen := map[string]bool{}
	values := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bad("content= JSON is not valid", "")
		}
		key, _ := tok.(string)
		if !paramName(key) {
			return bad("content= key "+strconv.Quote(shorten(key))+" is no parameter name", "keys are the tool's parameter names")
		}
		if seen[key] {
			return bad("content= key "+key+" appears twice", "give each key once; several values of a repeatable parameter go in an array")
		}
		seen[key] = true
		if len(seen) > MaxContentFields {
			return bad("content= has more than "+strconv.Itoa(MaxContentFields)+" keys", "")
		}
		vals, array, why := contentValues(dec, &values)
		if why != "" {
			return bad("content= "+key+": "+why, "values are strings, numbers, booleans, or arrays of them")
		}
		if key == "raw" {
			if array || vals[0].kind != jsonString {
				return bad("content= raw must be one string", "raw is the text the raw= tail would carry")
			}
			c.Raw, c.HasRaw = vals[0].text, true
			continue
		}
		f := Field{Key: key, Values: make([]string, len(vals))}
		for i, v := range vals {
			f.Values[i] = v.text
		}
		c.Fields = append(c.Fields, f)
	}
	if tok, err := dec.Token(); tok != json.Delim('}') || err != nil {
		return bad("content= JSON is not valid", "")
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad("content= holds more than one JSON value", "content= carries one JSON object")
	}
	return c, nil
}

type jsonKind uint8

const (
	jsonString jsonKind = iota
	jsonOther
)

type jsonValue struct {
	kind jsonKind
	text string
}

// contentValues reads one value (a scalar, or an array of scalars) and
// counts it against MaxContentValues; it returns why the value is refused.
func contentValues(dec *json.Decoder, count *int) (vals []jsonValue, array bool, why string) {
	tok, err := dec.Token()
	if err != nil {
		return nil, false, "not valid JSON"
	}
	if tok == json.Delim('[') {
		var out []jsonValue
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, true, "not valid JSON"
			}
			v, why := scalar(tok)
			if why != "" {
				return nil, true, "an array element is " + why
			}
			if *count++; *count > MaxContentValues {
				return nil, true, "more than " + strconv.Itoa(MaxContentValues) + " values in all"
			}
			out = append(out, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, true, "not valid JSON"
		}
		if len(out) == 0 {
			return nil, true, "an empty array (omit the key instead)"
		}
		return out, true, ""
	}
	v, why := scalar(tok)
	if why != "" {
		return nil, false, why
	}
	if *count++; *count > MaxContentValues {
		return nil, false, "more than " + strconv.Itoa(MaxContentValues) + " values in all"
	}
	return []jsonValue{v}, false, ""
}

func scalar(tok json.Token) (jsonValue, string) {
	switch v := tok.(type) {
	case string:
		return jsonValue{jsonString, v}, ""
	case json.Number:
		return jsonValue{jsonOther, v.String()}, ""
	case bool:
		return jsonValue{jsonOther, strconv.FormatBool(v)}, ""
	case nil:
		return jsonValue{}, "null (omit the key instead)"
	}
	return jsonValue{}, "an object or array (only scalars, or one array of scalars)"
}

func isB64URL(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// paramName reports whether k is shaped like a parameter name, so it can
// be written into a request-target as a key without escaping.
func paramName(k string) bool {
	if k == "" || len(k) > maxContentKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && ('0' <= c && c <= '9' || c == '_')) {
			return false
		}
	}
	return true
}

// loneSurrogate reports whether valid JSON text escapes a UTF-16
// surrogate that is not part of a high-low pair.
func loneSurrogate(b []byte) bool {
	pendingHigh := false
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			if pendingHigh {
				return true
			}
			continue
		}
		// In valid JSON a backslash only appears inside a string,
		// followed by an escape letter.
		if i+1 >= len(b) {
			return pendingHigh
		}
		if b[i+1] != 'u' || i+5 >= len(b) {
			if pendingHigh {
				return true
			}
			i++
			continue
		}
		n, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
		if err != nil {
			return true // cannot happen in valid JSON
		}
		switch {
		case n >= 0xD800 && n < 0xDC00:
			if pendingHigh {
				return true
			}
			pendingHigh = true
		case n >= 0xDC00 && n < 0xE000:
			if !pendingHigh {
				return true
			}
			pendingHigh = false
		default:
			if pendingHigh {
				return true
			}
		}
		i += 5
	}
	return pendingHigh
}

// CanonicalContent returns the canonical spelling of a content= value
// that is a deterministic respelling of one: the standard base64 alphabet
// (+ and /; a + a URL reader turned into a space counts as +) for the URL
// one, and = padding. It reports false when s needs no such change or is
// not base64 in either spelling; whether the result decodes is
// DecodeContent's to say.
func CanonicalContent(s string) (string, bool) {
	t := strings.TrimRight(s, "=")
	if len(s)-len(t) > 2 {
		return "", false
	}
	changed := len(t) != len(s)
	b := []byte(t)
	for i, c := range b {
		switch c {
		case '+', ' ':
			b[i], changed = '-', true
		case '/':
			b[i], changed = '_', true
		default:
			if !isB64URL(c) {
				return "", false
			}
		}
	}
	return string(b), changed
}

// EncodeContent is the inverse of DecodeContent for an object already
// marshalled: the canonical content= value of JSON text.
func EncodeContent(json []byte) string { return base64.RawURLEncoding.EncodeToString(json) }

// Target writes the decoded object as the request the compact route would
// get — route?key=value&…&raw=… in the order written, every value Encoded
// so it decodes back to exactly the JSON string — and parses it, so the
// request-target and raw tail limits hold for it as written: every URL a
// handler builds from it (retry, repeat, repair) is one the transport
// accepts.
func (c *Content) Target(route string) (*Target, *Error) {
	q := &Query{}
	for _, f := range c.Fields {
		for _, v := range f.Values {
			q.Add(f.Key, v)
		}
	}
	if c.HasRaw {
		q.SetRaw(c.Raw)
	}
	return ParseTarget(URL("", route, q))
}
