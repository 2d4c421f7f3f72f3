package transport

import (
	"strings"
	"testing"
)

func TestEncode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"src/app.ts", "src/app.ts"},
		{"hello world", "hello%20world"},
		{"a+b", "a~qb"},
		{"#1", "~h1"},
		{"100%", "100~p"},
		{"a&b", "a~ab"},
		{"~", "~~"},
		{"~u2082", "~~u2082"},
		{"a\nb\r\tc", "a~nb~r~tc"},
		{"\x00\x1f\x7f", "%00%1F%7F"},
		{`"<>\^` + "`{|}[]", "%22%3C%3E%5C%5E%60%7B%7C%7D%5B%5D"},
		{"-._!$'()*,/:;=?@", "-._!$'()*,/:;=?@"},
		{"CO₂", "CO~u2082"},
		{"é", "~u00E9"},
		{"😀", "~u{1F600}"},
		{"\U0010FFFF", "~u{10FFFF}"},
		{"\xff", "%FF"},
	} {
		if got := Encode(c.in); got != c.want {
			t.Errorf("Encode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// hostile rewrites URL readers are known to apply to a URL before fetching
// it; an encoded value must decode to the same text after any of them.
var hostile = []struct {
	name string
	f    func(string) string
}{
	{"identity", func(s string) string { return s }},
	{"%20 to +", func(s string) string { return strings.ReplaceAll(s, "%20", "+") }},
	{"~ to %7E", func(s string) string { return strings.ReplaceAll(s, "~", "%7E") }},
	{"~ to %7e", func(s string) string { return strings.ReplaceAll(s, "~", "%7e") }},
	{"lower-case hex", lowerHex},
	{"punctuation percent-encoded", encodePunct},
	{"harmless escapes decoded", decodeHarmless},
}

func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' && isHex(b[i+1]) && isHex(b[i+2]) {
			b[i+1], b[i+2] = lower(b[i+1]), lower(b[i+2])
		}
	}
	return string(b)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// encodePunct percent-encodes what encodeURIComponent would, except % ~ and
// the letters/digits: a reader normalising a query value.
func encodePunct(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '!', '$', '\'', '(', ')', '*', ',', '/', ':', ';', '=', '?', '@':
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// decodeHarmless turns %XX of printable ASCII other than the characters with
// a meaning (space % & + # ~) back into the character.
func decodeHarmless(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			c := unhex(s[i+1])<<4 | unhex(s[i+2])
			if c > ' ' && c < 0x7f && !strings.ContainsRune("%&+#~", rune(c)) {
				b.WriteByte(c)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestEncodeRoundTripsThroughHostileRewrites(t *testing.T) {
	inputs := []string{
		"", "plain", "a b+c&d=e#f%g~h", "~n~~u2082~uD83D", "%20%2B%7E", "100% + 50%",
		"C:\\Users\\me\\file.txt", `{"a":[1,2],"b":"x&y"}`, "line1\nline2\r\n\ttab",
		"\x00\x01\x1b[31m\x7f", "emoji 😀 and CO₂ and ↔", "'\"`<>|^[]{}", "+++", "~~~",
	}
	for _, in := range inputs {
		enc := Encode(in)
		for _, h := range hostile {
			if got := Decode(h.f(enc)); got != in {
				t.Errorf("%s: Decode(%q) = %q, want %q", h.name, h.f(enc), got, in)
			}
		}
	}
}

func TestQueryBuildsExactURLs(t *testing.T) {
	var q Query
	q.Add("path", "src/a b.ts").Add("start", "120").SetRaw("x&wait=1000 + y")
	got := URL("https://h.example/v0/AbCd1234", "/r", &q)
	want := "https://h.example/v0/AbCd1234/r?path=src/a%20b.ts&start=120&raw=x~await=1000%20~q%20y"
	if got != want {
		t.Fatalf("URL = %q, want %q", got, want)
	}
	if URL("https://h", "/k", nil) != "https://h/k" || URL("https://h", "/k", &Query{}) != "https://h/k" {
		t.Fatal("empty query must not add ?")
	}
}

func TestFits(t *testing.T) {
	for _, c := range []struct {
		u    string
		want bool
	}{
		{"https://h.example/v0/tok/r?path=a", true},
		{"/v0/tok/x?raw=" + strings.Repeat("a", MaxRaw), true},
		{"/v0/tok/x?raw=" + strings.Repeat("a", MaxRaw+1), false},
		{"http://h/v0/tok/r?path=" + strings.Repeat("a", MaxTarget), false},
		{"http://h", false},
	} {
		if got := Fits(c.u); got != c.want {
			t.Errorf("Fits(%.60q) = %v", c.u, got)
		}
	}
}
