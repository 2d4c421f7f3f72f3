package transport

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"", "~", "~~", "~n~r~t~h~p~q~s~a", "~uD83D~uDE00", "~uD83D", "~u{1F600}", "~u{110000}", "~u{",
	"%", "%7E", "%7En", "%C3%A9", "%E2%82", "%FF", "+%2B~q", "~p41", "%25~p", "a~e9", "~u00e9~U00E9",
}

// FuzzDecode: the decoder never panics, never grows its input, and keeps
// valid UTF-8 valid (lone surrogates are never produced).
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Decode(s)
		if len(out) > len(s) {
			t.Fatalf("Decode grew %d -> %d bytes", len(s), len(out))
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("Decode(%q) = %q is not valid UTF-8", s, out)
		}
		if tl := DecodeTilde(s); len(tl) > len(s) {
			t.Fatal("DecodeTilde grew")
		}
	})
}

// FuzzRoundTrip: Decode(Encode(x)) == x for every valid UTF-8 x, also after
// the rewrites URL readers make, and Encode's output is plain ASCII without
// the characters that would end or split a value.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("a b+c&d=e#f\n\x00😀é")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		enc := Encode(s)
		for i := 0; i < len(enc); i++ {
			if c := enc[i]; c <= ' ' || c >= 0x7f || c == '&' || c == '#' || c == '+' {
				t.Fatalf("Encode(%q) = %q has byte %q", s, enc, c)
			}
		}
		for _, h := range hostile {
			if got := Decode(h.f(enc)); got != s {
				t.Fatalf("%s: Decode(%q) = %q, want %q", h.name, h.f(enc), got, s)
			}
		}
	})
}

// FuzzBind: any request-target against real-shaped specs never panics,
// accepted requests respect the limits, and every repair URL offered binds
// cleanly.
func FuzzBind(f *testing.F) {
	for _, s := range []string{
		"/r?path=a&path=b&start=1&end=2", "/r?pth=a", "/x?raw=ls&wait=9000", "/x?wiat=1&raw=a~await=1",
		"/g?grep=a&query=a", "/g?raw=%", "/x?blob=a&count=2", "/r?path=&start", "/x?raw=" + strings.Repeat("~u{1F600}", 10),
		"http://h/x?raw=a&bg=1&run=2", "/g?mode=FILES&regex=TRUE&raw=a&include=x",
	} {
		f.Add(s)
	}
	specs := []*Spec{readSpec, grepSpec, termSpec, noParams, echoSpec}
	f.Fuzz(func(t *testing.T, target string) {
		tg, err := ParseTarget(target)
		if err != nil {
			if len(target) <= MaxTarget && err.Code == CodeRequestTooLarge {
				t.Fatal("refused a target within the limit")
			}
			return
		}
		if len(target) > MaxTarget || (tg.HasRaw && len(tg.Tail) > MaxRaw) {
			t.Fatal("limits not enforced")
		}
		for _, s := range specs {
			a, err := Bind(tg, s, base)
			if err != nil {
				if err.Code == "" || err.Detail == "" {
					t.Fatalf("empty error %+v", err)
				}
				if err.Repair != "" {
					rt, perr := ParseTarget(strings.TrimPrefix(err.Repair, base))
					if perr != nil {
						t.Fatalf("repair %q does not parse: %v", err.Repair, perr)
					}
					if _, berr := Bind(rt, s, base); berr != nil {
						t.Fatalf("repair %q of %q does not bind: %v", err.Repair, target, berr)
					}
				}
				continue
			}
			if raw, ok := a.Raw(); ok && len(raw) > MaxRaw {
				t.Fatal("decoded raw over the limit")
			}
		}
	})
}
