package journal

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRecordFile: whatever follows good lines in a record file (a torn
// line, garbage, hostile JSON), reading and opening it never crash, the
// good prompts before it are all there, every prompt indexed writes a
// record a face can decode, and an append after it is read back.
func FuzzRecordFile(f *testing.F) {
	f.Add([]byte(`{"text":"cut sho`))
	f.Add([]byte("{\"ev\":\"to\",\"id\":\"A\",\"to\":\"shell\"}\n{\"ev\":\"drop\",\"id\":\"B\"}\n"))
	f.Add([]byte(`{"text":"x","id":"Z","seq":9,"at":"2026-01-01T00:00:00Z","meta":{"k":1}}` + "\n"))
	f.Add([]byte(`{"text":"a\u0000b","id":"Y","seq":3,"at":"2026-01-01T00:00:00Z","meta":{},"text":"dup"}` + "\n"))
	f.Add([]byte(`{"text":"\ud83d`))
	f.Add([]byte("\n\n{}\nnull\n[1]\n\"s\"\n"))
	f.Add([]byte(`{"seq":1,"at":"2026-01-01T00:00:00Z","text":"legacy","meta":null,"deliveredTo":"mcp:x"}`))
	f.Fuzz(func(t *testing.T, tail []byte) {
		path := filepath.Join(t.TempDir(), "prompts.jsonl")
		good := open(t, path, 100, 64<<20)
		deliver(t, good, "one\n\"two\"", "")
		deliver(t, good, "three", "mcp:f")
		good.Close()
		fh, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		fh.Write(tail)
		fh.Close()

		recs, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) < 2 || recs[0].Text != "one\n\"two\"" || recs[1].Text != "three" {
			t.Fatalf("a good prompt is lost: %+v", recs)
		}
		j := open(t, path, 100, 64<<20)
		if j.Lookup(recs[0].ID) == nil {
			t.Fatal("the first good prompt is not indexed")
		}
		for _, e := range j.Entries() {
			var buf bytes.Buffer
			v := j.View(e)
			err := v.WriteRecord(&buf, "shell")
			v.Close()
			if err != nil {
				t.Fatal(err)
			}
			var r Record
			if err := json.Unmarshal(buf.Bytes(), &r); err != nil || r.ID != e.ID || r.Seq != e.Seq || r.DeliveredTo != "shell" {
				t.Fatalf("indexed prompt writes %q: %v", buf.Bytes(), err)
			}
		}
		e := deliver(t, j, "after", "")
		recs, _ = Read(path)
		if len(recs) == 0 || recs[len(recs)-1].Text != "after" || recs[len(recs)-1].ID != e.ID || recs[0].Text != "one\n\"two\"" {
			t.Fatalf("after an append: %+v", recs)
		}
	})
}
