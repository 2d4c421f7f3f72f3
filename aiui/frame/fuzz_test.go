package frame

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

func FuzzDecode(f *testing.F) {
	f.Add(raw(`{"v":1,"kind":"hello","format":"text-concat"}`, ""))
	f.Add(raw(`null`, "x"))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, '{'})
	f.Add(raw(`{"v":1,"kind":"data","threadId":"t","chunk":{"kind":"audio","seq":1}}`, "\x00\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		env, payload, err := Decode(b)
		if err != nil {
			return
		}
		if len(payload) > len(b) {
			t.Fatal("payload longer than frame")
		}
		if _, err := Encode(env, payload); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzJSONCodec(f *testing.F) {
	f.Add([]byte(`{"text":"hi"}`))
	f.Add([]byte(``))
	f.Add([]byte(`{"text":`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := JSON.Decode(b)
		if err != nil {
			return
		}
		if _, err := JSON.Encode(v); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzRawCodec(f *testing.F) {
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Raw.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Raw.Encode(v)
		if err != nil || len(out) != len(b) {
			t.Fatal("raw round trip changed length")
		}
	})
}

// FuzzDecodeFast: whatever the fast header decoder takes, encoding/json
// takes too and decodes to the same envelope.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range []string{
		`{"v":1,"kind":"data","threadId":"t1","fin":true}`,
		` { "fin" : false , "threadId":"é","kind":"data" ,"v":-0 } `,
		`{"v":1,"kind":"hello","format":"text-concat"}`,
		`{}`, `{"v":01}`, `{"v":1.0}`, `{"v":1e0}`, `{"kind":"a\u0062"}`, `{"Kind":"x"}`,
		`{"fin":true,"fin":false}`, `{"fin":truex}`, `{"v":1}x`, `{"v":999999999}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, hdr []byte) {
		if !utf8.Valid(hdr) {
			return
		}
		var fast Envelope
		if !decodeFast(hdr, &fast) {
			return
		}
		var std Envelope
		if err := json.Unmarshal(hdr, &std); err != nil || !reflect.DeepEqual(fast, std) {
			t.Fatalf("%q: fast %+v; encoding/json %+v, %v", hdr, fast, std, err)
		}
	})
}

// FuzzResponseJSON: an ack is written byte for byte as encoding/json
// writes it.
func FuzzResponseJSON(f *testing.F) {
	f.Add(true, "t1", false, "", false)
	f.Add(false, "<&>\u2028", true, "bad \"frame\"\n\xff", true)
	f.Fuzz(func(t *testing.T, ok bool, thread string, closed bool, msg string, fatal bool) {
		r := Response{OK: ok, ThreadID: thread, Closed: closed, Error: msg, Fatal: fatal}
		want, _ := json.Marshal(r)
		if got := r.AppendJSON(nil); string(got) != string(want) {
			t.Fatalf("%+v: %s; encoding/json %s", r, got, want)
		}
	})
}
