package intent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubdev/hub/aiui/frame"
)

// TestCorrectionRequestsBounded: a turn asks the upstream for at most
// MaxCorrectionRequests correction diffs (each a paid call, and a compose
// of the log before it: 20,000 requests in one batch cost minutes of CPU);
// the requests past it come back at once without a patch, with a note, so
// none silently vanishes.
func TestCorrectionRequestsBounded(t *testing.T) {
	fake := &fakeOpenAI{patchAnswer: "not a patch"}
	c, h := setup(t, `{"corrector":"openai"}`, fakeServer(t, fake))
	const n = 3 * MaxCorrectionRequests
	ev := []Event{{Type: TypeTranscriptFinal, Segment: 1, Text: StrPtr("hello world")}}
	for range n {
		ev = append(ev, Event{Type: TypeCorrection, Original: "world", Instruction: "there"})
	}
	events(t, c, ev...)
	send(t, c, nil, nil, true) // fin waits for the diffs in flight
	fake.mu.Lock()
	calls := len(fake.models)
	fake.mu.Unlock()
	if calls != MaxCorrectionRequests {
		t.Fatalf("%d correction diffs requested upstream for %d corrections, want %d", calls, n, MaxCorrectionRequests)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	refused := 0
	for _, p := range h.pushes {
		for _, e := range p["events"].([]any) {
			m := e.(map[string]any)
			if note, _ := m["note"].(string); strings.Contains(note, "not run") {
				refused++
			}
		}
	}
	if refused != n-MaxCorrectionRequests {
		t.Fatalf("%d corrections pushed back as not diffed, want %d", refused, n-MaxCorrectionRequests)
	}
}

// TestCorrectionEventsBounded: composing applies every correction to the
// whole transcript, so a turn holds at most MaxCorrectionsPerTurn of them.
// The batch that would pass it is refused whole (an error reply; the
// turn goes on), and echoes of corrections the server pushed do not count.
func TestCorrectionEventsBounded(t *testing.T) {
	c, _ := setup(t, `{"corrector":"mock"}`, nil)
	fix := func(n int) []Event {
		ev := make([]Event, n)
		for i := range ev {
			ev[i] = Event{Type: TypeCorrection, Original: "world", Instruction: "there", Patch: "p"}
		}
		return ev
	}
	events(t, c, append([]Event{{Type: TypeTranscriptFinal, Segment: 1, Text: StrPtr("hello world")}}, fix(MaxCorrectionsPerTurn-1)...)...)
	b, _ := json.Marshal(Batch{Events: fix(2)})
	if r := send(t, c, &frame.ChunkDescriptor{Kind: "events"}, b, false); r.OK || !strings.Contains(r.Error, "corrections") {
		t.Fatalf("a batch past the cap: %+v", r)
	}
	events(t, c, fix(1)...) // still room for one: the refused batch took none
	if r := send(t, c, nil, nil, true); !r.OK {
		t.Fatalf("fin: %+v", r)
	}
}

// TestSpeculationBoundedByWork: with corrections a compose costs events ×
// corrections, so speculation stops at a work budget, not only at an
// event count: a full set of corrections and then many one-event batches
// compose speculatively a bounded number of times, and fin still composes
// the whole turn.
func TestSpeculationBoundedByWork(t *testing.T) {
	c, h := setup(t, `{"corrector":"mock"}`, nil)
	fixes := make([]Event, MaxCorrectionsPerTurn)
	for i := range fixes {
		fixes[i] = Event{Type: TypeCorrection, Original: "word", Instruction: "w", Patch: "p"}
	}
	events(t, c, fixes...)
	const batches = 2000
	for i := range batches {
		events(t, c, Event{Type: TypeTranscriptFinal, Segment: i + 1, Text: StrPtr("a word")})
	}
	if r := send(t, c, nil, nil, true); !r.OK {
		t.Fatalf("fin: %+v", r)
	}
	spec := h.stageCount("speculative compose")
	h.mu.Lock()
	defer h.mu.Unlock()
	// Σ n·(1+256) over the composes stays within the budget: n ≤ ~310.
	if spec == 0 || spec > 400 {
		t.Fatalf("%d speculative composes over %d batches", spec, batches+1)
	}
	if len(h.prompts) != 1 {
		t.Fatalf("%d prompts delivered", len(h.prompts))
	}
}

// TestRefusedBatchHoldsNothing: a batch refused for the corrections cap is
// dropped, so it must not keep its bytes reserved against the connection's
// budget: the turn goes on, and refusals must not starve it until a batch
// of a few events is refused for memory it does not hold.
func TestRefusedBatchHoldsNothing(t *testing.T) {
	c, _ := setup(t, `{"corrector":"mock"}`, nil)
	c.MaxHeldBytes = 1 << 20
	fix := make([]Event, MaxCorrectionsPerTurn+1)
	for i := range fix {
		fix[i] = Event{Type: TypeCorrection, Original: "world", Instruction: "there", Patch: "p"}
	}
	b, _ := json.Marshal(Batch{Events: fix})
	for range 32 {
		if r := send(t, c, &frame.ChunkDescriptor{Kind: "events"}, b, false); r.OK || !strings.Contains(r.Error, "corrections") {
			t.Fatalf("a batch past the corrections cap: %+v", r)
		}
	}
	events(t, c, Event{Type: TypeTranscriptFinal, Segment: 1, Text: StrPtr("hello world")})
}
