package intents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
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

// FuzzRestore feeds arbitrary bytes to the journal file's parser: it
// never panics, stays within the journal's bounds, and what it accepts
// it writes back (a compaction) as a file that restores to the same
// records.
func FuzzRestore(f *testing.F) {
	hdr := `{"k":"hdr","v":1,"session":"s0a1b2c","gen":"0123456789abcdef"}` + "\n"
	d, _ := Identity("write", "x", "")
	run := fmt.Sprintf(`{"k":"run","call":"%s","tool":"write","digest":"%x","origin":"/w?raw=x","created":"2026-03-04T05:06:07Z"}`+"\n", AutoID("write", d), d[:])
	f.Add([]byte(hdr))
	f.Add([]byte(hdr + run))
	f.Add([]byte(hdr + run + fmt.Sprintf(`{"k":"done","call":"%s","state":"succeeded","result":{"a":"<&>"},"tag":3}`+"\n", AutoID("write", d))))
	f.Add([]byte(hdr + run + fmt.Sprintf(`{"k":"done","call":"%s","state":"failed","err":{"code":"x","fields":[{"key":"path","val":"/project/a"}]}}`+"\n", AutoID("write", d))))
	f.Add([]byte(hdr + `{"k":"tomb","key":"00112233445566778899aabbccddeeff","digest":"00112233445566778899aabbccddeeff","tool":"edit","failed":true}` + "\n"))
	f.Add([]byte(hdr + `{"k":"run","call":"my.call","explicit":true,"tool":"plugin","digest":"` + strings.Repeat("ab", 32) + `","created":"2026-03-04T05:06:07Z"}` + "\n{\"k\":"))
	f.Fuzz(func(t *testing.T, b []byte) {
		o := Options{Now: fixed, MaxRecords: 4, MaxBytes: 4096, MaxTombstones: 4}
		j := New(o)
		if err := j.restore(b, testID); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("a refusal that is not ErrCorrupt: %v", err)
			}
			return
		}
		if len(j.records) > 4 || len(j.tombs) > 4 || len(j.tombSeq) != len(j.tombs) {
			t.Fatalf("%d records, %d tombstones", len(j.records), len(j.tombs))
		}
		for _, e := range j.records {
			if !e.rec.State.Finished() {
				t.Fatalf("a restored record is %s", e.rec.State)
			}
		}
		snap, err := j.snapshot(testID)
		if err != nil {
			t.Fatal(err)
		}
		again := New(o)
		if err := again.restore(snap, testID); err != nil {
			t.Fatalf("its own snapshot refused: %v\n%s", err, snap)
		}
		if len(again.records) != len(j.records) || len(again.tombs) != len(j.tombs) {
			t.Fatalf("snapshot restores %d/%d, had %d/%d", len(again.records), len(again.tombs), len(j.records), len(j.tombs))
		}
		for k, e := range j.records {
			a := again.records[k]
			if a == nil || a.rec.State != e.rec.State || !bytes.Equal(a.rec.Result, e.rec.Result) {
				t.Fatalf("%s changed through a snapshot", k)
			}
		}
	})
}
