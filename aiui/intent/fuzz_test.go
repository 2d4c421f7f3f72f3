package intent

import (
	"testing"

	"github.com/hubdev/hub/aiui/frame"
)

func FuzzApplyPatch(f *testing.F) {
	f.Add("a\nb", "*** Begin Patch\n*** Update File: transcript\n@@\n-a\n+c\n*** End Patch")
	f.Add("", "*** Begin Patch\n*** End Patch")
	f.Fuzz(func(t *testing.T, doc, patch string) {
		ApplyPatch(doc, patch)
	})
}

func FuzzParseBatchCompose(f *testing.F) {
	f.Add([]byte(`{"events":[{"at":1,"type":"transcript-final","segment":1,"text":"hi"},{"type":"correction","from":0,"to":2,"original":"hi","instruction":"yo"}]}`))
	f.Add([]byte(`{"events":[{"type":"shot","marker":"shot_1","rect":{"x":1,"y":2,"w":3,"h":4}}]}`))
	f.Add([]byte(`{"events":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := ParseBatch(b)
		if err != nil {
			return
		}
		Lower(Compose(ev, PolicyPatch), "")
	})
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"transcriber":"openai","passes":{"silenceTrim":false},"correctionPolicy":"replace"}`))
	f.Add([]byte(`{"passes":["downscale"],"realtimeDelay":"xhigh"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseConfig(b)
	})
}

// FuzzProcessorChunks feeds arbitrary chunk payloads to an intent-v1
// thread: every outcome is a frame-level error or success, never a panic
// or a fatal reply.
func FuzzProcessorChunks(f *testing.F) {
	f.Add("events", "", []byte(`{"events":[{"type":"shot","marker":"shot_1"},{"type":"thread-close","reason":"send"}]}`))
	f.Add("attachment", "shot_1", []byte("\x89PNG"))
	f.Add("audio", "seg_1", []byte{1, 2})
	f.Add("context", "", []byte(`{"selection":{"text":"x"}}`))
	f.Fuzz(func(t *testing.T, kind, id string, payload []byte) {
		c, _ := setup(t, "", nil)
		seq := int64(0)
		r := send(t, c, &frame.ChunkDescriptor{Kind: kind, ID: id, Mime: "image/png", Seq: &seq}, payload, false)
		if r.Fatal {
			t.Fatalf("fatal reply: %+v", r)
		}
		if r := send(t, c, nil, nil, true); r.Fatal {
			t.Fatalf("fatal fin: %+v", r)
		}
	})
}
