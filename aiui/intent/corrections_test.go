package intent

import (
	"strings"
	"testing"
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
