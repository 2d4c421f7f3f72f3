package transport

import "testing"

// TestDecode is the decision table for the decoder: each row is one rule
// (or one interaction of rules) the README documents.
func TestDecode(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		// plain and + as space
		{"plain", "src/app.ts", "src/app.ts"},
		{"plus is space", "python+--version", "python --version"},
		{"percent space", "hello%20world", "hello world"},
		{"~q is a literal plus", "a~qb", "a+b"},
		{"%2B is a literal plus (escaped, so never a space)", "a%2Bb", "a+b"},
		{"~s is an explicit space", "a~sb", "a b"},

		// the one-letter escapes
		{"newline", "a~nb", "a\nb"},
		{"carriage return", "a~rb", "a\rb"},
		{"tab", "a~tb", "a\tb"},
		{"hash", "~h1", "#1"},
		{"percent", "100~p", "100%"},
		{"ampersand", "foo~await=1000", "foo&wait=1000"},
		{"tilde", "~~", "~"},
		{"tilde then letter", "~~n", "~n"},
		{"triple tilde n", "~~~n", "~\n"},

		// ordering between percent and tilde
		{"%7E is a tilde and takes part in the grammar", "%7En", "\n"},
		{"lower-case %7e too", "%7en", "\n"},
		{"%7E%7E is an escaped tilde", "%7E%7E", "~"},
		{"~ then %6E: percent first, so ~n", "~%6E", "\n"},
		{"~p makes a % that is not decoded again", "~p41", "%41"},
		{"~p20 stays %20", "a~p20b", "a%20b"},
		{"%25 decodes once", "%2541", "%41"},
		{"%25 then ~ grammar: %25 gives %, not an escape", "%257E", "%7E"},
		{"plus then percent: + is space, %2B plus", "+%2B+", " + "},

		// tolerant percent
		{"stray percent", "100%", "100%"},
		{"percent then one hex", "%4", "%4"},
		{"percent non-hex", "%zz", "%zz"},
		{"percent at end of run", "%41%4", "A%4"},
		{"valid UTF-8 run", "%C3%A9", "é"},
		{"lower-case hex UTF-8", "%c3%a9", "é"},
		{"truncated UTF-8 run kept literally", "%E2%82", "%E2%82"},
		{"invalid continuation kept, rest decoded", "%C3%28", "%C3("},
		{"lone continuation byte kept", "%A9", "%A9"},
		{"0xFF kept", "%FF%41", "%FFA"},
		{"overlong slash kept (no ../ smuggling)", "%C0%AF", "%C0%AF"},
		{"UTF-8-encoded surrogate kept", "%ED%A0%80", "%ED%A0%80"},
		{"4-byte emoji", "%F0%9F%98%80", "😀"},
		{"raw UTF-8 passes through", "é✓", "é✓"},
		{"control via percent", "%00%1F%7F", "\x00\x1f\x7f"},

		// ~u
		{"code unit", "CO~u2082", "CO₂"},
		{"code unit lower hex", "~u00e9", "é"},
		{"surrogate pair", "~uD83D~uDE00", "😀"},
		{"surrogate pair lower", "~ud83d~ude00", "😀"},
		{"braced code point", "~u{1F600}", "😀"},
		{"braced small", "~u{41}", "A"},
		{"braced max", "~u{10FFFF}", "\U0010FFFF"},
		{"braced NUL", "~u{0}", "\x00"},
		{"braced six digits with zeros", "~u{00004A}", "J"},
		{"four digits then hex text", "~u00411", "A1"},

		// malformed: kept verbatim
		{"unknown letter", "~e9", "~e9"},
		{"upper-case letter is not an escape", "~N", "~N"},
		{"tilde at end", "a~", "a~"},
		{"lone tilde then escape", "~x~n", "~x\n"},
		{"bad hex", "~uZZZZ", "~uZZZZ"},
		{"truncated code unit", "~u12", "~u12"},
		{"truncated at end", "~u", "~u"},
		{"lone high surrogate", "~uD83D", "~uD83D"},
		{"high surrogate then text", "~uD83Dx", "~uD83Dx"},
		{"high then non-low", "~uD83D~u0041", "~uD83DA"},
		{"high then escape", "~uD83D~n", "~uD83D\n"},
		{"two highs", "~uD83D~uD83D~uDE00", "~uD83D😀"},
		{"lone low surrogate", "~uDE00", "~uDE00"},
		{"braced out of range", "~u{110000}", "~u{110000}"},
		{"braced too many digits", "~u{0000041}", "~u{0000041}"},
		{"braced empty", "~u{}", "~u{}"},
		{"braced unterminated", "~u{1F600", "~u{1F600"},
		{"braced bad hex", "~u{12G}", "~u{12G}"},
		{"braced surrogate", "~u{D83D}", "~u{D83D}"},
		{"escaped escape", "~~u2082", "~u2082"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Decode(c.in); got != c.want {
				t.Errorf("Decode(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestDecodeNoAllocWhenPlain(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() { _ = Decode("src/app/main.go") })
	if allocs != 0 {
		t.Fatalf("plain value allocated %v times", allocs)
	}
}
