package intents

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/internal/cputime"
)

// BenchmarkReplay is a replayed intent's whole journal cost: the identity
// of a 4 KiB write (canonical encoding + SHA-256) and the lookup.
func BenchmarkReplay(b *testing.B) {
	j := New(Options{})
	in := Intent{Tool: "write", Args: map[string]any{"path": "/project/src/app.ts", "content": strings.Repeat("x", 4<<10)},
		Exec: func(context.Context, *Run) (any, *fault.Error) { return map[string]int{"bytes": 4096}, nil }}
	_, start, _ := j.Begin(in)
	start(context.Background())
	b.ReportAllocs()
	done := cputime.Start(b)
	for b.Loop() {
		if _, s, err := j.Begin(in); s != nil || err != nil {
			b.Fatal("not a replay")
		}
	}
	done()
}

// BenchmarkCanonicalJSON canonicalises a plugin argument object.
func BenchmarkCanonicalJSON(b *testing.B) {
	raw := json.RawMessage(`{"prompt":"Run the targeted test suite and report the result.","workdir":"/project","action":"start","labels":["a","b"],"opts":{"z":1,"a":[true,null,2.5]}}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CanonicalJSON(raw); err != nil {
			b.Fatal(err)
		}
	}
}
