package intent

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/frame"
)

var update = flag.Bool("update", false, "rewrite the golden files")

type golden struct {
	Sent    bool              `json:"sent"`
	Content string            `json:"content,omitempty"`
	Meta    map[string]string `json:"meta,omitempty"`
}

// TestLoweringGolden replays each recorded event stream through Compose
// and Lower (shots wired to fake blob paths as the processor would on
// arrival) and compares with the hand-reviewed golden prompt.
func TestLoweringGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	var inputs []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".golden.json") {
			inputs = append(inputs, f)
		}
	}
	if len(inputs) != 5 {
		t.Fatalf("want the 5 recorded streams, found %v", inputs)
	}
	meta := &frame.HelloMeta{Tab: &frame.TabInfo{Title: "workbench", URL: "http://localhost:5173/"}, Source: &frame.SourceInfo{Root: "/repo/workbench"}}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var events []Event
			if err := json.Unmarshal(b, &events); err != nil {
				t.Fatal(err)
			}
			for i := range events {
				if events[i].Type == TypeShot {
					events[i].Path = "/blobs/" + events[i].Marker + ".png"
				}
			}
			p, ok := Lower(Compose(events, PolicyPatch), channel.Preamble(meta, ""))
			got, _ := json.MarshalIndent(golden{Sent: ok, Content: p.Content, Meta: p.Meta}, "", "  ")
			got = append(got, '\n')
			path := filepath.Join("testdata", name+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("lowering of %s changed:\n got: %s\nwant: %s", name, got, want)
			}
		})
	}
}
