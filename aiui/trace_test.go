package aiui

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/internal/race"
)

// countingDetail counts how often a trace marshals it.
type countingDetail struct{ n *atomic.Int32 }

func (d countingDetail) MarshalJSON() ([]byte, error) {
	d.n.Add(1)
	return []byte(`"detail"`), nil
}

// TestTraceStopsMarshalingWhenFull: a thread's trace keeps a bounded
// number of stages; once full, further stages (e.g. a speculative compose
// after every one of thousands of event batches, each a whole composed
// intent) are dropped before they are marshaled, so a long or hostile turn
// does not pay a JSON encoding per frame for nothing. The stages that end
// the turn still find room, so the viewer shows what it lowered to.
func TestTraceStopsMarshalingWhenFull(t *testing.T) {
	tr := newTraceStore().open("th", "intent-v1", nil)
	var n atomic.Int32
	for range maxStages + 100 {
		tr.stage("speculative compose", countingDetail{&n})
	}
	if got, want := int(n.Load()), maxStages-endStages; got != want {
		t.Fatalf("marshaled %d details for a trace holding %d speculative composes", got, want)
	}
	if len(tr.Stages) != maxStages-endStages || tr.Dropped != 100+endStages {
		t.Fatalf("trace holds %d stages, dropped %d", len(tr.Stages), tr.Dropped)
	}
	tr.stage("lowered prompt", channel.Prompt{Text: "the prompt"})
	tr.stage(channel.StageAbandoned, "the connection closed before fin")
	if tr.State != stateAbandoned {
		t.Fatalf("a full trace no longer records its end state: %q", tr.State)
	}
	if last := tr.Stages[len(tr.Stages)-2]; last.Stage != "lowered prompt" {
		t.Fatalf("the lowered prompt found no room in a full trace: %q", last.Stage)
	}
}

// TestTraceStates: the state a thread ends in follows the stages its
// connection and processor record.
func TestTraceStates(t *testing.T) {
	s := newTraceStore()
	for _, tc := range []struct {
		name   string
		stages []string
		done   bool
		want   string
	}{
		{"running", []string{"client context", "speculative compose"}, false, stateOpen},
		{"delivered", []string{"lowered prompt"}, true, stateDelivered},
		{"cancelled", []string{channel.StageCancelled, channel.StageClosed}, false, stateCancelled},
		{"abandoned", []string{"speculative compose", channel.StageAbandoned}, false, stateAbandoned},
		{"rejected, then dropped", []string{channel.StageRejected, channel.StageAbandoned}, false, stateFailed},
		{"rejected fin", []string{channel.StageRejected, channel.StageClosed}, false, stateFailed},
		{"nothing to send", []string{channel.StageClosed}, false, stateEmpty},
	} {
		tr := s.open(tc.name, "intent-v1", nil)
		for _, st := range tc.stages {
			tr.stage(st, nil)
		}
		if tc.done {
			tr.done(stateDelivered)
			tr.stage(channel.StageClosed, nil)
		}
		if tr.State != tc.want {
			t.Errorf("%s: state %q, want %q", tc.name, tr.State, tc.want)
		}
	}
}

// TestTraceChanges: a reader that remembers what it was sent gets only
// the traces changed since, each with only its new stages; a trace that
// fell out of the recent ones takes its blob keys with it.
func TestTraceChanges(t *testing.T) {
	s := newTraceStore()
	a := s.open("a", "intent-v1", nil)
	a.stage("client context", nil)
	sent := map[string]int{}
	v1, ids, out := s.changes(0, sent)
	if len(ids) != 1 || len(out) != 1 || len(out[0].Stages) != 1 || out[0].From != 0 {
		t.Fatalf("first read: %v %+v", ids, out)
	}
	if _, _, out := s.changes(v1, sent); len(out) != 0 {
		t.Fatalf("nothing changed, got %+v", out)
	}
	a.stage("attachment", channel.Blob{ID: "shot_1", Mime: "image/png", Path: "/blobs/shot_1.png", Bytes: 3})
	b := s.open("b", "text-concat", nil)
	v2, ids, out := s.changes(v1, sent)
	if v2 <= v1 || len(ids) != 2 || len(out) != 2 {
		t.Fatalf("after a stage and a new trace: v%d %v %+v", v2, ids, out)
	}
	if out[0].From != 1 || len(out[0].Stages) != 1 || out[0].Stages[0].Stage != "attachment" {
		t.Fatalf("a's delta: from %d, %+v", out[0].From, out[0].Stages)
	}
	key := a.Blobs[0].Key
	if !strings.Contains(string(out[0].Stages[0].Detail), `"key":"`+key+`"`) {
		t.Fatalf("attachment stage lacks its key: %s", out[0].Stages[0].Detail)
	}
	if got, ok := s.blob(key); !ok || got.Path != "/blobs/shot_1.png" {
		t.Fatalf("blob %q: %+v %v", key, got, ok)
	}
	if _, _, full := s.changes(0, nil); len(full[0].Stages) != 2 || full[0].From != 0 {
		t.Fatalf("a plain reader gets whole traces: %+v", full[0])
	}
	_ = b
	for range maxTraces {
		s.open("later", "text-concat", nil)
	}
	if _, ok := s.blob(key); ok {
		t.Fatal("a trace that fell out still serves its blob")
	}
	if _, ids, _ := s.changes(v2, sent); len(ids) != maxTraces || len(sent) > maxTraces {
		t.Fatalf("held %d ids, reader remembers %d", len(ids), len(sent))
	}
}

// TestTraceKeepsTheLoweredPromptReadable: a long prompt is cut as text,
// not turned into a string of cut JSON.
func TestTraceKeepsTheLoweredPromptReadable(t *testing.T) {
	tr := newTraceStore().open("th", "intent-v1", nil)
	tr.stage("lowered prompt", channel.Prompt{Text: strings.Repeat("é", maxPromptText), Meta: map[string]string{"shot_1": "/p"}})
	d := string(tr.Stages[0].Detail)
	if !strings.HasPrefix(d, `{"text":"éé`) || !strings.Contains(d, `…","meta":{"shot_1":"/p"}}`) {
		t.Fatalf("lowered prompt detail: %.80s … %s", d, d[len(d)-40:])
	}
}

// FuzzPromptJSON: a prompt stage's detail is written byte for byte as
// encoding/json writes it.
func FuzzPromptJSON(f *testing.F) {
	f.Add("make it <amber> & bold\n", "tab", "https://x/?a=1&b=2", "b", "\xff")
	f.Add("", "", "", "", "")
	f.Fuzz(func(t *testing.T, text, k1, v1, k2, v2 string) {
		for _, meta := range []map[string]string{nil, {}, {k1: v1}, {k1: v1, k2: v2}} {
			p := channel.Prompt{Text: text, Meta: meta}
			want, _ := json.Marshal(p)
			if got := appendPromptJSON(nil, p); string(got) != string(want) {
				t.Fatalf("%+v: %s; encoding/json %s", p, got, want)
			}
		}
	})
}

// TestTraceOfATextPromptAllocs: what a text thread's trace costs per
// prompt, in the order NewThread and text-concat record it (a full store,
// as on a busy backend): its prompt's 4 KiB preview is encoded into one
// buffer sized for it, and a new trace pushing the oldest out of the store
// moves the rest in place. Allocations, not time: 15 or fewer (there were
// 31: a buffer regrown a dozen times per prompt, the store copied per
// thread, the stages regrown, the id formatted by fmt and lower-cased).
func TestTraceOfATextPromptAllocs(t *testing.T) {
	s := newTraceStore()
	for range maxTraces {
		s.open("old", "text-concat", nil).done(stateDelivered)
	}
	preview := strings.Repeat("make the baseline amber <3 & ship it\n", 4<<10/37)
	meta := map[string]string{"kind": "prompt", "format": "text-concat", "tab.url": "https://example.test/app"}
	allocs := testing.AllocsPerRun(100, func() {
		tr := s.open("thread", "text-concat", nil)
		tr.stage("lowered prompt", channel.Prompt{Text: preview, Meta: meta})
		tr.stage(channel.StageClosed, nil)
		tr.done(stateDelivered)
	})
	if allocs > 15 && !race.Enabled {
		t.Errorf("a text prompt's trace made %.0f allocations, want at most 15", allocs)
	}
	if len(s.traces) != maxTraces {
		t.Errorf("store holds %d traces, want %d", len(s.traces), maxTraces)
	}
	var p struct {
		Text string            `json:"text"`
		Meta map[string]string `json:"meta"`
	}
	tr := s.traces[len(s.traces)-1]
	if err := json.Unmarshal(tr.Stages[0].Detail, &p); err != nil || p.Text != preview || len(p.Meta) != 3 {
		t.Errorf("lowered prompt detail reads back as %q, %v (%v)", p.Text, p.Meta, err)
	}
}
