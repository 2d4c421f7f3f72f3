package channel

import (
	"encoding/json"
	"testing"

	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/aiui/jsonstr"
)

// TestTextConcatFastPathMatchesJSON: the compact {"text":"…"} payload
// (validated in place) and any other spelling of it (decoded by
// encoding/json) deliver the same text.
func TestTextConcatFastPathMatchesJSON(t *testing.T) {
	for _, text := range []string{"plain", "line\nbreak \"quoted\" \\ / \t", "é → 😀", "\u2028<&>", "nul \x00 byte"} {
		quoted, _ := json.Marshal(text)
		fast := `{"text":` + string(quoted) + `}`
		slow := `{ "text" : ` + string(quoted) + ` }`
		if v, _ := (textCodec{}).Decode([]byte(fast)); func() bool { _, ok := v.(textChunk); return !ok }() {
			t.Fatalf("%s did not take the fast path", fast)
		}
		var got []string
		for _, payload := range []string{fast, slow} {
			c, h := newConn()
			c.Handle(true, enc(t, hello("text-concat"), ""))
			if r := c.Handle(true, enc(t, data("t", true), payload)); !r.OK {
				t.Fatalf("%s: %+v", payload, r)
			}
			got = append(got, h.prompts[0].Text)
		}
		if got[0] != text || got[1] != text {
			t.Fatalf("text %q delivered as %q (fast) and %q (slow)", text, got[0], got[1])
		}
	}
}

// FuzzTextCodec: on any payload the fast path agrees with the JSON codec
// and encoding/json: the same payloads fail, and a chunk it accepts
// decodes to the text encoding/json finds.
func FuzzTextCodec(f *testing.F) {
	for _, s := range []string{`{"text":"a"}`, `{"text":"a\nb"}`, `{"text":"\ud83d"}`, `{"text":"a\"}`, `{"text":"x"}}`, `{"text":1}`, "{\"text\":\"\xff\"}", ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := (textCodec{}).Decode(b)
		_, jerr := frame.JSON.Decode(b)
		if (err == nil) != (jerr == nil) {
			t.Fatalf("codec error %v, JSON codec error %v", err, jerr)
		}
		c, ok := v.(textChunk)
		if !ok {
			return
		}
		var want struct{ Text string }
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("fast path accepted what encoding/json refuses: %v", err)
		}
		got, err := jsonstr.Decode(c.contents)
		if err != nil || got != want.Text || len(got) != c.decoded {
			t.Fatalf("fast path text %q (%d bytes counted), encoding/json %q", got, c.decoded, want.Text)
		}
	})
}

// TestTextConcatTakesOnlyTheTextMember: the chunk is { text?: string },
// matched exactly; a member spelled otherwise ("Text", "TEXT") is not the
// text and adds nothing, as in any client reading payload.text.
func TestTextConcatTakesOnlyTheTextMember(t *testing.T) {
	c, h := newConn()
	c.Handle(true, enc(t, hello("text-concat"), ""))
	for _, payload := range []string{`{"Text":"A"}`, `{"TEXT":"B"}`, `{"text":"C","Text":"D"}`, `{ "text" : "E" }`, `{"text":null}`} {
		if r := c.Handle(true, enc(t, data("t", false), payload)); !r.OK {
			t.Fatalf("%s: %+v", payload, r)
		}
	}
	if r := c.Handle(true, enc(t, data("t", true), `{"text":5}`)); r.OK {
		t.Fatalf("a non-string text was accepted: %+v", r)
	}
	c.Handle(true, enc(t, data("t", true), ""))
	if len(h.prompts) != 1 || h.prompts[0].Text != "CE" {
		t.Fatalf("prompts = %+v, want one with text CE", h.prompts)
	}
}
