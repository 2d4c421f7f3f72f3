package jsonw

import (
	"encoding/json"
	"strings"
	"testing"
)

// reference is what encoding/json writes with HTML escaping off.
func reference(t testing.TB, v any) string {
	b, err := Reflect(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var samples = []string{
	"", "a", "plain ascii text, longer than eight bytes", `"`, `\`, "<a href=\"x\">&amp;</a>",
	"line\nline\r\n\ttab\b\f\x00\x01\x1f\x7f", "é ß € 字 😀 𝄞", "\u2028\u2029 separators",
	"\xff invalid \xc3 utf8 \xed\xa0\x80 surrogate", "12345678\"12345678\\12345678\n",
	strings.Repeat("x", 63) + "\n", "ends in a multi-byte é", "\xe2\x80", "\xe2\x80\xa8",
	"https://abc.trycloudflare.com/v0/AbCd1234/r?path=a.ts&start=3",
}

// referenceHTML is what json.Marshal writes (HTML escaping on).
func referenceHTML(t testing.TB, s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStringMatchesEncodingJSON(t *testing.T) {
	check := func(in string) {
		t.Helper()
		if got, want := string(String(nil, in)), reference(t, in); got != want {
			t.Fatalf("String(%q) = %s, want %s", in, got, want)
		}
		if got, want := string(StringHTML(nil, in)), referenceHTML(t, in); got != want {
			t.Fatalf("StringHTML(%q) = %s, want %s", in, got, want)
		}
	}
	for _, s := range samples {
		// every offset, so the eight-byte skip meets each byte at each lane
		for i := 0; i <= len(s); i++ {
			check(s[i:] + s[:i])
		}
	}
	for c := range 256 {
		check(strings.Repeat("abcdefgh", 2) + string([]byte{byte(c)}) + "ijklmnop")
	}
}

func TestScalars(t *testing.T) {
	for _, ss := range [][]string{nil, {}, {"a"}, {"a", "b\n"}} {
		if got, want := string(Strings(nil, ss)), reference(t, ss); got != want {
			t.Fatalf("Strings(%#v) = %s, want %s", ss, got, want)
		}
	}
	for _, n := range []int64{0, -1, 42, 1 << 40} {
		if got, want := string(Int(nil, n)), reference(t, n); got != want {
			t.Fatalf("Int(%d) = %s", n, got)
		}
	}
	if string(Bool(nil, true)) != "true" || string(Bool(nil, false)) != "false" {
		t.Fatal("Bool")
	}
}

func FuzzString(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(String(nil, s)), reference(t, s); got != want {
			t.Fatalf("String(%q) = %s, want %s", s, got, want)
		}
		if got, want := string(StringHTML(nil, s)), referenceHTML(t, s); got != want {
			t.Fatalf("StringHTML(%q) = %s, want %s", s, got, want)
		}
	})
}

// BenchmarkString is a 4 KiB source file as /r carries it.
func BenchmarkString(b *testing.B) {
	s := strings.Repeat("\tif err := doSomething(ctx, \"value\"); err != nil { return err }\n", 64)
	buf := make([]byte, 0, 8<<10)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = String(buf[:0], s)
	}
}

// BenchmarkStringEncodingJSON is the same string through encoding/json, the
// baseline String replaces.
func BenchmarkStringEncodingJSON(b *testing.B) {
	s := strings.Repeat("\tif err := doSomething(ctx, \"value\"); err != nil { return err }\n", 64)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		json.Marshal(s)
	}
}
