package intent

import "testing"

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
