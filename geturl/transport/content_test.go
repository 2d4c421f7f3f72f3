package transport

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"
)

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// TestDecodeContentStrict: only canonical base64url of one JSON object of
// scalars (or arrays of them) with parameter-shaped, unique keys decodes;
// everything else is invalid_content, never a guess.
func TestDecodeContentStrict(t *testing.T) {
	long := `{"raw":"` + strings.Repeat("x", MaxContentJSON) + `"}`
	for _, c := range []struct {
		name, in string
		ok       bool
	}{
		{"object", b64(`{"path":"a.txt"}`), true},
		{"array and raw", b64(`{"path":["a","b"],"start":1,"regex":true,"raw":"x"}`), true},
		{"surrogate pair", b64(`{"raw":"\ud83d\ude00"}`), true},
		{"escaped backslash then u", b64(`{"raw":"\\ud800"}`), true},
		{"padded", b64(`{"a":"b"}`) + "=", false},
		{"standard alphabet", base64.StdEncoding.EncodeToString([]byte(`{"raw":"???>>>"}`)), false},
		{"space for plus", strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(`{"raw":">>>"}`)), "+", " "), false},
		{"trailing bits", b64(`{"a":"b"}`)[:len(b64(`{"a":"b"}`))-1] + "R", false},
		{"empty", "", false},
		{"too long", b64(long), false},
		{"not json", b64(`{"a":`), false},
		{"two values", b64(`{"a":"b"} {}`), false},
		{"array top", b64(`["a"]`), false},
		{"invalid utf8", b64("{\"a\":\"\xff\"}"), false},
		{"lone high", b64(`{"raw":"\ud800x"}`), false},
		{"lone low", b64(`{"raw":"\udc00"}`), false},
		{"high then high", b64(`{"raw":"\ud800\ud800"}`), false},
		{"duplicate key", b64(`{"path":"a","path":"a"}`), false},
		{"null", b64(`{"path":null}`), false},
		{"nested", b64(`{"path":{"a":1}}`), false},
		{"nested array", b64(`{"path":[["a"]]}`), false},
		{"empty array", b64(`{"path":[]}`), false},
		{"key shape", b64(`{"a&b":"c"}`), false},
		{"empty key", b64(`{"":"c"}`), false},
		{"raw array", b64(`{"raw":["a"]}`), false},
		{"raw number", b64(`{"raw":1}`), false},
		{"too many values", b64(`{"path":[` + strings.Repeat(`"a",`, MaxContentValues) + `"a"]}`), false},
	} {
		got, err := DecodeContent(c.in)
		if (err == nil) != c.ok {
			t.Errorf("%s: got %+v, %v", c.name, got, err)
			continue
		}
		if err != nil && (err.Code != CodeInvalidContent || err.Detail == "") {
			t.Errorf("%s: error %+v", c.name, err)
		}
	}
}

// TestContentTargetRoundTrips: the decoded object becomes the compact
// request whose binding yields exactly the JSON's strings, in order.
func TestContentTargetRoundTrips(t *testing.T) {
	text := "a b+c&d=e#f~n%41\n\x00😀é&wait=1"
	c, err := DecodeContent(b64(`{"path":["x&y","z"],"raw":` + quote(text) + `}`))
	if err != nil {
		t.Fatal(err)
	}
	tg, err := c.Target("/w")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Bind(tg, &Spec{Route: "/w", Params: []Param{{Name: "path", Repeat: 2}}, Raw: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := a.Raw(); raw != text {
		t.Fatalf("raw %q", raw)
	}
	if p := a.Texts("path"); len(p) != 2 || p[0] != "x&y" || p[1] != "z" {
		t.Fatalf("path %q", p)
	}
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20:
			b.WriteString(`\u00` + "0123456789abcdef"[r>>4:r>>4+1] + "0123456789abcdef"[r&15:r&15+1])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestCanonicalContent: the standard alphabet, a space a reader made of
// +, and padding are respelled; anything else is not.
func TestCanonicalContent(t *testing.T) {
	js := `{"raw":"???>>>"}`
	std := base64.StdEncoding.EncodeToString([]byte(js))
	for _, in := range []string{std, strings.ReplaceAll(std, "+", " "), b64(js) + "="} {
		got, ok := CanonicalContent(in)
		if !ok || got != b64(js) {
			t.Errorf("%q: %q %v", in, got, ok)
		}
	}
	for _, in := range []string{b64(js), "a*b", "ab===", "a=b"} {
		if got, ok := CanonicalContent(in); ok && in != "a=b" {
			t.Errorf("%q: respelled to %q", in, got)
		}
	}
}

// FuzzDecodeContent: the decoder never panics; what it accepts is the
// canonical spelling of at most MaxContentJSON bytes of UTF-8, within the
// key and value bounds, and its compact target binds back to the same
// strings.
func FuzzDecodeContent(f *testing.F) {
	for _, s := range []string{`{"path":"a"}`, `{"path":["a","b"],"raw":"~n&x=1"}`, `{"raw":"\ud83d\ude00"}`, `{"a":null}`, `{"a":{}}`, `{"raw":"\ud800"}`, `[]`, `{"a":1.5e3,"b":false}`} {
		f.Add(b64(s))
	}
	f.Add("e30=")
	f.Add("e30")
	f.Add("+/==")
	spec := &Spec{Route: "/q", Params: []Param{{Name: "path", Repeat: MaxContentValues, AllowEmpty: true}}, Raw: true}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := DecodeContent(s)
		if err != nil {
			if err.Code != CodeInvalidContent {
				t.Fatalf("code %q", err.Code)
			}
			if canon, ok := CanonicalContent(s); ok && strings.ContainsAny(canon, "+/= ") {
				t.Fatalf("respelling %q is not base64url", canon)
			}
			return
		}
		raw, derr := base64.RawURLEncoding.DecodeString(s)
		if derr != nil || base64.RawURLEncoding.EncodeToString(raw) != s || len(raw) > MaxContentJSON || !utf8.Valid(raw) {
			t.Fatalf("accepted a non-canonical or oversized %q", s)
		}
		n := 0
		for _, fl := range c.Fields {
			n += len(fl.Values)
			if !paramName(fl.Key) {
				t.Fatalf("key %q", fl.Key)
			}
		}
		if len(c.Fields) > MaxContentFields || n > MaxContentValues {
			t.Fatal("bounds")
		}
		tg, terr := c.Target("/q")
		if terr != nil {
			return // too long as a compact URL: refused, not cut
		}
		var only []Field
		for _, fl := range c.Fields {
			if fl.Key == "path" {
				only = append(only, fl)
			}
		}
		if len(only) != len(c.Fields) {
			return
		}
		a, berr := Bind(tg, spec, "")
		if berr != nil {
			return
		}
		if r, ok := a.Raw(); ok != c.HasRaw || r != c.Raw {
			t.Fatalf("raw %q != %q", r, c.Raw)
		}
		if len(only) == 1 && strings.Join(a.Texts("path"), "\x00") != strings.Join(only[0].Values, "\x00") {
			t.Fatalf("path %q != %q", a.Texts("path"), only[0].Values)
		}
	})
}
