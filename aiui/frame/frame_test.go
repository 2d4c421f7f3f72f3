package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func raw(hdr string, payload string) []byte {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, uint32(len(hdr)))
	return append(append(b, hdr...), payload...)
}

func TestDecode(t *testing.T) {
	big := make([]byte, 4)
	binary.BigEndian.PutUint32(big, 0xFFFFFFF0)
	tests := []struct {
		name    string
		frame   []byte
		wantErr error
		kind    string
		payload string
	}{
		{"hello", raw(`{"v":1,"kind":"hello","format":"text-concat"}`, ""), nil, "hello", ""},
		{"data with payload", raw(`{"v":1,"kind":"data","threadId":"t"}`, `{"text":"hi"}`), nil, "data", `{"text":"hi"}`},
		{"short", []byte{0, 0}, ErrShort, "", ""},
		{"header past end", raw(`{}`, "")[:5], ErrHeaderRange, "", ""},
		{"gigantic declared length", append(big, '{', '}'), ErrHeaderRange, "", ""},
		{"null header", raw(`null`, ""), ErrHeaderShape, "", ""},
		{"array header", raw(`[1]`, ""), ErrHeaderShape, "", ""},
		{"empty header", raw(``, "x"), ErrHeaderShape, "", ""},
		{"invalid utf8", raw("{\"kind\":\"\xff\"}", ""), ErrHeaderUTF8, "", ""},
		{"oversized header", raw(`{"x":"`+strings.Repeat("a", MaxHeaderBytes)+`"}`, ""), ErrHeaderSize, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, payload, err := Decode(tt.frame)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if env.Kind != tt.kind || string(payload) != tt.payload {
				t.Fatalf("got kind %q payload %q", env.Kind, payload)
			}
		})
	}
}

func TestDecodeIsZeroCopy(t *testing.T) {
	f := raw(`{"v":1,"kind":"data","threadId":"t"}`, "PAYLOAD")
	_, payload, err := Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	payload[0] = 'X'
	if !bytes.HasSuffix(f, []byte("XAYLOAD")) {
		t.Fatal("payload is a copy, want a view into the frame")
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	seq := int64(3)
	env := Envelope{V: 1, Kind: KindData, ThreadID: "abc", Fin: true, Chunk: &ChunkDescriptor{Kind: "audio", ID: "seg_1", Seq: &seq, Mime: "audio/pcm"}}
	f, err := Encode(env, []byte{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	got, p, err := Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if got.ThreadID != "abc" || !got.Fin || got.Chunk == nil || *got.Chunk.Seq != 3 || !bytes.Equal(p, []byte{1, 2, 3}) {
		t.Fatalf("round trip: %+v %v", got, p)
	}
}

func TestCodecs(t *testing.T) {
	v, err := JSON.Decode(nil)
	if err != nil || v != nil {
		t.Fatalf("empty JSON payload = %v, %v; want nil", v, err)
	}
	if b, _ := JSON.Encode(nil); string(b) != "null" {
		t.Fatalf("JSON.Encode(nil) = %s", b)
	}
	if _, err := JSON.Decode([]byte("{bad")); err == nil {
		t.Fatal("bad JSON decoded")
	}
	in := []byte{0, 1, 2}
	v, _ = Raw.Decode(in)
	if !bytes.Equal(v.([]byte), in) {
		t.Fatal("raw codec changed bytes")
	}
	if _, err := Raw.Encode("x"); err == nil {
		t.Fatal("raw codec encoded a string")
	}
}

// The headers of every text-thread data frame take the fast path; what
// it cannot prove equal to encoding/json's reading does not.
func TestDecodeFast(t *testing.T) {
	for _, tc := range []struct {
		hdr  string
		ok   bool
		want Envelope
	}{
		{`{"v":1,"kind":"data","threadId":"t1"}`, true, Envelope{V: 1, Kind: "data", ThreadID: "t1"}},
		{` {"fin": true ,"threadId":"t1","kind":"data","v":1}`, true, Envelope{V: 1, Kind: "data", ThreadID: "t1", Fin: true}},
		{`{"v":1,"kind":"hello","format":"text-concat"}`, true, Envelope{V: 1, Kind: "hello", Format: "text-concat"}},
		{`{}`, true, Envelope{}},
		{`{"v":1,"kind":"hello","meta":{}}`, false, Envelope{}},
		{`{"v":1,"kind":"data","chunk":{"kind":"audio"}}`, false, Envelope{}},
		{`{"kind":"da\u0074a"}`, false, Envelope{}},
		{`{"Kind":"data"}`, false, Envelope{}},
		{`{"kind":"data","kind":"hello"}`, false, Envelope{}},
		{`{"v":null}`, false, Envelope{}},
		{`{"v":01}`, false, Envelope{}},
		{`{"v":1.5}`, false, Envelope{}},
		{`{"v":1,}`, false, Envelope{}},
		{`{"v":1} {}`, false, Envelope{}},
	} {
		var env Envelope
		if ok := decodeFast([]byte(tc.hdr), &env); ok != tc.ok || ok && env != tc.want {
			t.Errorf("decodeFast(%s) = %+v, %v; want %+v, %v", tc.hdr, env, ok, tc.want, tc.ok)
		}
	}
}
