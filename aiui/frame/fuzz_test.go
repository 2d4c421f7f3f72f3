package frame

import "testing"

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
