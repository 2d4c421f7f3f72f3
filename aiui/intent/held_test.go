package intent

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/hubdev/hub/aiui/frame"
)

// TestEventsHeldAsParsed: a connection's budget for what its open threads
// hold counts events as they are held in memory, not as their JSON: tiny
// events ({"type":"a"}, 13 bytes) parse into structs many times larger,
// and counting the wire bytes let a few threads of one connection hold
// gigabytes within a 64 MiB budget.
func TestEventsHeldAsParsed(t *testing.T) {
	c, _ := setup(t, "", nil)
	c.MaxHeldBytes = 8 << 20
	ev := make([]map[string]string, 20_000)
	for i := range ev {
		ev[i] = map[string]string{"type": "a"}
	}
	batch, _ := json.Marshal(map[string]any{"events": ev}) // 260 KB of JSON
	send := func(thread string) frame.Response {
		b, _ := frame.Encode(frame.Envelope{V: 1, Kind: "data", ThreadID: thread, Chunk: &frame.ChunkDescriptor{Kind: "events"}}, batch)
		return c.Handle(true, b)
	}
	if r := send("t1"); !r.OK {
		t.Fatalf("one batch of %d events was refused: %+v", len(ev), r)
	}
	// 20k events are over 6 MB as Event structs: a second thread's batch
	// takes the connection past 8 MiB, though its JSON is 0.5 MB in all
	r := send("t2")
	if r.OK || !strings.Contains(r.Error, "would hold more than") {
		t.Fatalf("a second thread's %d events were taken within an 8 MiB budget: %+v", len(ev), r)
	}
}

// TestBatchOverTheCapStopsEarly: a batch of more events than a turn may
// hold is refused as its decoding gets there, not after decoding all of
// it (a 16 MiB batch of {"type":"a"} is 1.3 million events, over a
// gigabyte decoded).
func TestBatchOverTheCapStopsEarly(t *testing.T) {
	const n = (16 << 20) / 13
	b := make([]byte, 0, 16<<20+32)
	b = append(b, `{"events":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"a"}`...)
	}
	b = append(b, "]}"...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ev, err := ParseBatch(b)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "at most") {
		t.Fatalf("a batch of %d events parsed: %d events, err %v", n, len(ev), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Fatalf("refusing the batch allocated %d MiB", alloc>>20)
	}
}
