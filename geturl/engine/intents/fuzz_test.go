package intents

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzCanonicalJSON checks the canonicaliser on arbitrary bytes: it never
// panics; what it accepts is valid JSON with the same value; it is
// idempotent; and any reformatting that keeps the value (here: the
// standard library's compact and indented forms) canonicalises to the
// same bytes.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{
		`{"action":"start","workdir":"/project","prompt":"Run the tests."}`,
		`{"b":[1,2,{"y":null,"x":true}],"a":"\u00e9\n"}`,
		`[1.0,-0,1e400,"\ud800"]`,
		`{"a":1,"a":2}`,
		`{"":{"":{"":[]}}}`,
		`"\u0000\u001f\u007f\u2028"`,
		"{\"k\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := CanonicalJSON(in)
		if err != nil {
			return
		}
		if !json.Valid(c) || !utf8.Valid(c) {
			t.Fatalf("invalid output %q from %q", c, in)
		}
		var a, b any
		da, db := json.NewDecoder(bytes.NewReader(in)), json.NewDecoder(bytes.NewReader(c))
		da.UseNumber()
		db.UseNumber()
		if da.Decode(&a) != nil || db.Decode(&b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("value changed: %q -> %q", in, c)
		}
		again, err := CanonicalJSON(c)
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", in, c, again, err)
		}
		var ind bytes.Buffer
		if json.Indent(&ind, in, " ", "\t") == nil {
			if c2, err := CanonicalJSON(ind.Bytes()); err != nil || !bytes.Equal(c2, c) {
				t.Fatalf("indenting changed the canonical form: %q vs %q (%v)", c2, c, err)
			}
		}
		var cmp bytes.Buffer
		if json.Compact(&cmp, in) == nil {
			if c2, err := CanonicalJSON(cmp.Bytes()); err != nil || !bytes.Equal(c2, c) {
				t.Fatalf("compacting changed the canonical form: %q vs %q (%v)", c2, c, err)
			}
		}
	})
}

// FuzzIdentity checks that the identity of native arguments tells any two
// different argument strings apart and ignores nothing but map order.
func FuzzIdentity(f *testing.F) {
	f.Add("/project/a", "x", "/project/a", "y", "")
	f.Add("a\xff", "", "a\ufffd", "", "2")
	f.Add(`\udcff`, "", "\xff", "", "")
	f.Fuzz(func(t *testing.T, p1, c1, p2, c2, run string) {
		d1, err1 := Identity("write", map[string]any{"path": p1, "content": c1}, run)
		d2, err2 := Identity("write", map[string]any{"content": c2, "path": p2}, run)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if (d1 == d2) != (p1 == p2 && c1 == c2) {
			t.Fatalf("identity of (%q,%q) vs (%q,%q): equal=%v", p1, c1, p2, c2, d1 == d2)
		}
	})
}
