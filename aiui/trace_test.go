package aiui

import (
	"sync/atomic"
	"testing"
)

// countingDetail counts how often a trace marshals it.
type countingDetail struct{ n *atomic.Int32 }

func (d countingDetail) MarshalJSON() ([]byte, error) {
	d.n.Add(1)
	return []byte(`"detail"`), nil
}

// TestTraceStopsMarshalingWhenFull: a thread's trace keeps maxStages
// stages; once full, further stages (e.g. a speculative compose after
// every one of thousands of event batches, each a whole composed intent)
// are dropped before they are marshaled, so a long or hostile turn does
// not pay a JSON encoding per frame for nothing.
func TestTraceStopsMarshalingWhenFull(t *testing.T) {
	tr := newTraceStore().open("th", "intent-v1", nil)
	var n atomic.Int32
	for range maxStages + 100 {
		tr.stage("speculative compose", countingDetail{&n})
	}
	if got := int(n.Load()); got != maxStages {
		t.Fatalf("marshaled %d details for a trace holding %d stages", got, maxStages)
	}
	if len(tr.Stages) != maxStages {
		t.Fatalf("trace holds %d stages", len(tr.Stages))
	}
	tr.stage("abandoned", "the connection closed before fin")
	if tr.State != "abandoned" {
		t.Fatalf("a full trace no longer records its end state: %q", tr.State)
	}
}
