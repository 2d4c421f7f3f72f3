package aiui

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// slowPace makes body deadlines short enough to test: 200 ms plus a
// negligible per-byte allowance.
var slowPace = hub.BodyPace{Base: 200 * time.Millisecond, MinRate: 1 << 30}

// TestSlowPromptBodyIsCutOff is issue 15 row 5 as probed: a POST /prompt
// whose body trickles one byte at a time is cut off at its deadline
// instead of being held for as long as the client likes.
func TestSlowPromptBodyIsCutOff(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Port = 0
	h := adaptertest.Start(t, New(cfg), adaptertest.Options{BodyPace: slowPace})
	const n = 200                                                 // 10 s at one byte per 50 ms
	for _, origin := range []string{"", "https://evil.example"} { // read, and refused unread
		hdr := http.Header{}
		if origin != "" {
			hdr.Set("Origin", origin)
		}
		res := adaptertest.Trickle(t, h.Addr(), "POST", "/prompt", hdr, n, 50*time.Millisecond)
		if !res.Cut || res.Sent >= n {
			t.Fatalf("origin %q: %+v, want the body cut off", origin, res)
		}
	}
}

// TestFollowStreamsOutliveTheBodyDeadline: the prompt follow stream and
// a face's event stream carry no body, so the body deadline never touches
// them: a prompt posted long after the deadline still reaches both.
func TestFollowStreamsOutliveTheBodyDeadline(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Port = 0
	h := adaptertest.Start(t, New(cfg), adaptertest.Options{BodyPace: slowPace})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	followed := make(chan string, 4)
	streams := make(chan error, 2)
	go func() {
		streams <- control(t, h).Prompts(ctx, true, func(r Record, _ []byte) error { followed <- r.Text; return nil })
	}()
	face := control(t, h)
	face.Face = "slow-body-face"
	events := make(chan FaceEvent, 4)
	go func() {
		streams <- face.Events(ctx, "/repo", func(ev FaceEvent) error { events <- ev; return nil })
	}()
	adaptertest.WaitFor(t, "the face to attach", func() bool { return control(t, h).infoFaces() == 1 })
	time.Sleep(5 * slowPace.Base) // both streams idle well past a body deadline
	if r := h.Do(adaptertest.Request{Method: "POST", Path: "/prompt", Body: []byte(`{"text":"after the deadline"}`)}); r.Status != 200 {
		t.Fatalf("prompt: %d %s", r.Status, r.Body)
	}
	select {
	case text := <-followed:
		if text != "after the deadline" {
			t.Fatalf("followed %q", text)
		}
	case err := <-streams:
		t.Fatalf("a stream ended: %v", err)
	case <-time.After(adaptertest.WaitTimeout):
		t.Fatal("the follow stream did not deliver the prompt")
	}
	select {
	case <-events:
	case err := <-streams:
		t.Fatalf("a stream ended: %v", err)
	case <-time.After(adaptertest.WaitTimeout):
		t.Fatal("the face's event stream did not deliver the prompt")
	}
	cancel()
	<-streams
	<-streams
}

// TestPromptBodiesShareABudget: /prompt has no credential, so the large
// bodies being read at once share the backend's budget; one that finds
// no room gets 503 with Retry-After, and a small one never waits.
func TestPromptBodiesShareABudget(t *testing.T) {
	h, s := start(t, nil)
	s.cur.Load().promptBodies = hub.NewBudget(1) // no room for anything large
	large := []byte(`{"text":"` + strings.Repeat("x", hub.BudgetFloor) + `"}`)
	r := h.Do(adaptertest.Request{Method: "POST", Path: "/prompt", Body: large})
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("a large prompt with no room: %d %s", r.Status, r.Body)
	}
	if r := h.Do(adaptertest.Request{Method: "POST", Path: "/prompt", Body: []byte(`{"text":"small"}`)}); r.Status != 200 {
		t.Fatalf("a small prompt: %d %s", r.Status, r.Body)
	}
}
