package intent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/frame"
)

// fakeRealtime is a local stand-in for the GA realtime transcription
// endpoint: it checks the handshake and session.update, counts appended
// audio, streams two deltas while audio is still arriving, and answers the
// commit with the completed transcript (the recorded wire sequence).
type fakeRealtime struct {
	mu       sync.Mutex
	auth     string
	query    string
	update   map[string]any
	audio    []byte
	appends  int
	commits  int
	closed   chan struct{}
	errorOut bool
	silent   bool // never answers a commit
}

func (f *fakeRealtime) OnOpen(*gws.Conn)             {}
func (f *fakeRealtime) OnPing(c *gws.Conn, p []byte) { c.WritePong(p) }
func (f *fakeRealtime) OnPong(*gws.Conn, []byte)     {}
func (f *fakeRealtime) OnClose(*gws.Conn, error)     { close(f.closed) }
func (f *fakeRealtime) send(c *gws.Conn, v any) {
	b, _ := json.Marshal(v)
	c.WriteMessage(gws.OpcodeText, b)
}
func (f *fakeRealtime) OnMessage(c *gws.Conn, m *gws.Message) {
	defer m.Close()
	var msg map[string]any
	json.Unmarshal(m.Bytes(), &msg)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch msg["type"] {
	case "session.update":
		f.update = msg
	case "input_audio_buffer.append":
		b, _ := base64.StdEncoding.DecodeString(msg["audio"].(string))
		f.audio = append(f.audio, b...)
		f.appends++
		if f.errorOut {
			f.send(c, map[string]any{"type": "error", "error": map[string]any{"message": "session expired"}})
			return
		}
		switch f.appends {
		case 2:
			f.send(c, map[string]any{"type": "conversation.item.input_audio_transcription.delta", "item_id": "item_1", "delta": "reaction "})
		case 3:
			f.send(c, map[string]any{"type": "conversation.item.input_audio_transcription.delta", "item_id": "item_1", "delta": "diffusion on the gpu"})
		}
	case "input_audio_buffer.commit":
		f.commits++
		if f.silent {
			return
		}
		f.send(c, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_1", "transcript": "reaction diffusion on the GPU"})
	}
}

func startFakeRealtime(t *testing.T, errorOut bool) (*fakeRealtime, string) {
	f := &fakeRealtime{closed: make(chan struct{}), errorOut: errorOut}
	up := gws.NewUpgrader(f, &gws.ServerOption{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/realtime" {
			http.NotFound(w, r)
			return
		}
		f.mu.Lock()
		f.auth, f.query = r.Header.Get("Authorization"), r.URL.RawQuery
		f.mu.Unlock()
		c, err := up.Upgrade(w, r)
		if err != nil {
			return
		}
		go c.ReadLoop()
	}))
	t.Cleanup(srv.Close)
	return f, srv.URL + "/v1"
}

func TestRealtimeTranscription(t *testing.T) {
	fake, base := startFakeRealtime(t, false)
	h := &host{t: t, dir: t.TempDir()}
	deps := &Deps{NewOpenAI: func() *OpenAI { return &OpenAI{Key: "sk-rt"} }, RealtimeModel: "gpt-realtime-whisper",
		BlobDir: func(*channel.ThreadContext) (string, error) { return h.dir, nil }, FinWait: 5 * time.Second, Realtime: OpenAIRealtime(base)}
	c := newIntentConn(t, h, deps, `{"transcriber":"openai-realtime","realtimeDelay":"low"}`)
	pcm := playRealtimeFixture(t, c)
	if len(h.prompts) != 1 || !strings.HasSuffix(h.prompts[0].Text, "reaction diffusion on the GPU") {
		t.Fatalf("prompt = %+v", h.prompts)
	}
	select {
	case <-fake.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("upstream socket not closed on fin")
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if fake.auth != "Bearer sk-rt" || fake.query != "intent=transcription" || string(fake.audio) != string(pcm) || fake.commits != 1 {
		t.Fatalf("upstream saw auth=%q query=%q audio=%d/%d commits=%d", fake.auth, fake.query, len(fake.audio), len(pcm), fake.commits)
	}
	sess, _ := json.Marshal(fake.update["session"])
	want := `{"audio":{"input":{"format":{"rate":24000,"type":"audio/pcm"},"transcription":{"delay":"low","model":"gpt-realtime-whisper"},"turn_detection":null}},"type":"transcription"}`
	if string(sess) != want {
		t.Fatalf("session.update = %s", sess)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var got []string
	for _, p := range h.pushes {
		for _, e := range p["events"].([]any) {
			m := e.(map[string]any)
			got = append(got, m["type"].(string)+":"+m["text"].(string))
		}
	}
	wantEv := []string{"transcript-delta:reaction ", "transcript-delta:reaction diffusion on the gpu", "transcript-final:reaction diffusion on the GPU"}
	if strings.Join(got, "|") != strings.Join(wantEv, "|") {
		t.Fatalf("pushed %q, want %q", got, wantEv)
	}
}

func TestRealtimeUpstreamErrorDegradesLoudly(t *testing.T) {
	_, base := startFakeRealtime(t, true)
	h := &host{t: t, dir: t.TempDir()}
	deps := &Deps{NewOpenAI: func() *OpenAI { return &OpenAI{Key: "sk-rt"} }, RealtimeModel: "m",
		BlobDir: func(*channel.ThreadContext) (string, error) { return h.dir, nil }, FinWait: 5 * time.Second, Realtime: OpenAIRealtime(base)}
	c := newIntentConn(t, h, deps, `{"transcriber":"openai-realtime"}`)
	playRealtimeFixture(t, c)
	if len(h.prompts) != 1 || !strings.Contains(h.prompts[0].Text, "session expired") {
		t.Fatalf("prompt = %+v", h.prompts)
	}
}

func TestRealtimeURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.openai.com/v1": "wss://api.openai.com/v1/realtime?intent=transcription",
		"http://127.0.0.1:9/v1/":    "ws://127.0.0.1:9/v1/realtime?intent=transcription",
	} {
		if got := RealtimeURL(in); got != want {
			t.Errorf("RealtimeURL(%q) = %q", in, got)
		}
	}
}

// TestRealtimeCloseDuringHandshake: closing a session (fin, cancel or a
// dropped page) while the upstream handshake hangs on a slow network
// ends the dialing goroutine at once instead of after the handshake
// timeout, so the upstream socket is never leaked past the thread.
func TestRealtimeCloseDuringHandshake(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c // never answers the handshake
		}
	}()
	sess, err := OpenAIRealtime("http://"+ln.Addr().String()+"/v1")(context.Background(), "sk-rt", "m", "", RealtimeEvents{Final: func(int, string, error) {}})
	if err != nil {
		t.Fatal(err)
	}
	var peer net.Conn
	select {
	case peer = <-accepted:
		defer peer.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("no upstream dial")
	}
	sess.Close()
	select {
	case <-sess.(*rtSession).done:
	case <-time.After(2 * time.Second):
		t.Fatal("the session's goroutine still waits for the upstream handshake after Close")
	}
}

// TestRealtimeCloseEndsPendingSegments: a segment committed upstream whose
// transcript never arrives still gets its (loud, failed) final when the
// session closes — every commit is balanced by exactly one final, so the
// turn's in-flight count drops and nothing waits on it forever. Through
// the processor: a fin that gave up waiting still tears down cleanly.
func TestRealtimeCloseEndsPendingSegments(t *testing.T) {
	fake, base := startFakeRealtime(t, false)
	fake.mu.Lock()
	fake.silent = true
	fake.mu.Unlock()
	finals := make(chan error, 4)
	sess, err := OpenAIRealtime(base)(context.Background(), "sk-rt", "m", "", RealtimeEvents{
		Final: func(_ int, _ string, err error) { finals <- err }})
	if err != nil {
		t.Fatal(err)
	}
	sess.Append(1, []byte{0, 0})
	if err := sess.Commit(1); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		fake.mu.Lock()
		n := fake.commits
		fake.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the commit never reached the upstream")
		}
		time.Sleep(5 * time.Millisecond)
	}
	sess.Close()
	select {
	case err := <-finals:
		if err == nil {
			t.Fatal("a segment cut off by Close got a successful final")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a committed segment got no final after Close")
	}

	// the same through a turn: fin waits (bounded), then teardown must not
	// deadlock delivering the cut-off final
	fake2, base2 := startFakeRealtime(t, false)
	fake2.mu.Lock()
	fake2.silent = true
	fake2.mu.Unlock()
	h := &host{t: t, dir: t.TempDir()}
	deps := &Deps{NewOpenAI: func() *OpenAI { return &OpenAI{Key: "sk-rt"} }, RealtimeModel: "m",
		BlobDir: func(*channel.ThreadContext) (string, error) { return h.dir, nil }, FinWait: 100 * time.Millisecond, Realtime: OpenAIRealtime(base2)}
	c := newIntentConn(t, h, deps, `{"transcriber":"openai-realtime"}`)
	seq := int64(0)
	events(t, c, Event{Type: TypeTalkStart, Segment: 1})
	send(t, c, &frame.ChunkDescriptor{Kind: "audio", ID: "seg_1", Seq: &seq, Mime: "audio/pcm;rate=24000"}, []byte{0, 0}, false)
	events(t, c, Event{Type: TypeTalkEnd, Segment: 1})
	done := make(chan frame.Response, 1)
	go func() { done <- send(t, c, nil, nil, true) }()
	select {
	case r := <-done:
		if !r.Closed {
			t.Fatalf("fin: %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("fin with a cut-off realtime segment never returned")
	}
}
