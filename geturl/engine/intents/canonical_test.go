package intents

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCanonicalJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{" {\n\t\"a\" : [ 1 , {\"d\":null,\"c\":true} ] }\n", `{"a":[1,{"c":true,"d":null}]}`},
		{`"\u0041\/\u00e9"`, `"A/é"`},
		{`"<&>"`, `"<&>"`},
		{`"\u007f\u001f\b"`, "\"\x7f\\u001f\\b\""},
		{`{"é":1,"e":2,"z":3,"Z":4}`, `{"Z":4,"e":2,"z":3,"é":1}`},
		{`[1.0, 1, -0, 1e2, 1E+2]`, `[1.0,1,-0,1e2,1E+2]`},
		{`{}`, `{}`},
		{`[]`, `[]`},
		{`"\ud83d\ude00"`, `"😀"`},
	} {
		got, err := CanonicalJSON([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s %v, want %s", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		want error
	}{
		{`{"a":1,"a":1}`, ErrDuplicateKey},
		{`{"a":{"b":1,"b":2}}`, ErrDuplicateKey},
		{`{"a":1} {}`, ErrNotJSON},
		{`{"a":1`, ErrNotJSON},
		{`{a:1}`, ErrNotJSON},
		{`[1,]`, ErrNotJSON},
		{``, ErrNotJSON},
		{"\"\xff\"", ErrInvalidUTF8},
		{strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2), ErrTooDeep},
		{`"` + strings.Repeat("a", MaxCanonicalBytes) + `"`, ErrTooLarge},
	} {
		if _, err := CanonicalJSON([]byte(tc.in)); !errors.Is(err, tc.want) {
			name := tc.in
			if len(name) > 40 {
				name = name[:40]
			}
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
}

// Native arguments are Go strings with any bytes in them (a raw tail may
// carry invalid UTF-8): two different strings never share an encoding.
func TestCanonicalStringsAreInjective(t *testing.T) {
	seen := map[string]string{}
	for _, s := range []string{"", "a", "\xff", "\xfe", "\ufffd", `\udcff`, "\xed\xb3\xbf", "\x00", `\u0000`, "\u2028", "\"", `\"`} {
		c, err := Canonical(s)
		if err != nil {
			t.Fatal(err)
		}
		if prev, dup := seen[string(c)]; dup {
			t.Fatalf("%q and %q both encode as %s", prev, s, c)
		}
		seen[string(c)] = s
	}
	c, _ := Canonical(map[string]any{"path": "/project/a", "content": "x\xffy", "n": 3, "list": []string{"b", "a"}, "raw": json.RawMessage(`{"z":1,"y":2}`)})
	if string(c) != `{"content":"x\udcffy","list":["b","a"],"n":3,"path":"/project/a","raw":{"y":2,"z":1}}` {
		t.Fatalf("%s", c)
	}
	if _, err := Canonical(struct{}{}); !errors.Is(err, ErrUnsupported) {
		t.Fatal(err)
	}
	if _, err := Canonical(json.Number("01")); !errors.Is(err, ErrNotJSON) {
		t.Fatal(err)
	}
}
