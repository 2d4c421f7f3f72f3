package intent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/frame"
)

type host struct {
	t       *testing.T
	dir     string
	mu      sync.Mutex
	prompts []channel.Prompt
	pushes  []map[string]any
	stages  []string
}

func (h *host) NewThread(ctx *channel.ThreadContext) {
	ctx.TraceID = "trace1"
	ctx.SendPrompt = func(p channel.Prompt) error { h.mu.Lock(); h.prompts = append(h.prompts, p); h.mu.Unlock(); return nil }
	ctx.Push = func(v any) error {
		b, _ := json.Marshal(v)
		var m map[string]any
		json.Unmarshal(b, &m)
		h.mu.Lock()
		h.pushes = append(h.pushes, m)
		h.mu.Unlock()
		return nil
	}
	ctx.Trace = func(stage string, detail any) {
		h.mu.Lock()
		if d, ok := detail.(string); ok && stage == "composed intent" {
			stage += ": " + d
		}
		h.stages = append(h.stages, stage)
		h.mu.Unlock()
	}
	ctx.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
}

// stageCount is how many times the trace recorded stage name.
func (h *host) stageCount(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.stages {
		if s == name {
			n++
		}
	}
	return n
}

func setup(t *testing.T, intentCfg string, oa *OpenAI) (*channel.Conn, *host) {
	h := &host{t: t, dir: t.TempDir()}
	return newIntentConn(t, h, testDeps(h, oa), intentCfg), h
}

// testDeps are the processor's dependencies for a test: the blob store is
// h.dir and the REST client is oa.
func testDeps(h *host, oa *OpenAI) *Deps {
	return &Deps{
		NewOpenAI:       func() *OpenAI { return oa },
		TranscribeModel: "whisper-test",
		RealtimeModel:   "realtime-test",
		CorrectionModel: "fix-test",
		BlobDir:         func(*channel.ThreadContext) (string, error) { return h.dir, nil },
		FinWait:         5 * time.Second,
	}
}

// newIntentConn is a connection that said hello with format intent-v1.
func newIntentConn(t *testing.T, h *host, deps *Deps, intentCfg string) *channel.Conn {
	c := channel.NewConn(channel.Registry{"intent-v1": Format(deps)}, h, slog.Default())
	env := frame.Envelope{V: 1, Kind: "hello", Format: "intent-v1", Meta: &frame.HelloMeta{Source: &frame.SourceInfo{Root: "/repo"}}}
	if intentCfg != "" {
		env.Meta.Intent = json.RawMessage(intentCfg)
	}
	b, _ := frame.Encode(env, nil)
	if r := c.Handle(true, b); !r.OK {
		t.Fatalf("hello: %+v", r)
	}
	return c
}

func send(t *testing.T, c *channel.Conn, chunk *frame.ChunkDescriptor, payload []byte, fin bool) frame.Response {
	t.Helper()
	b, _ := frame.Encode(frame.Envelope{V: 1, Kind: "data", ThreadID: "th", Fin: fin, Chunk: chunk}, payload)
	return c.Handle(true, b)
}

func events(t *testing.T, c *channel.Conn, ev ...Event) {
	t.Helper()
	b, _ := json.Marshal(Batch{Events: ev})
	if r := send(t, c, &frame.ChunkDescriptor{Kind: "events"}, b, false); !r.OK {
		t.Fatalf("events: %+v", r)
	}
}

func loadFixture(t *testing.T, name string) []Event {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev []Event
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestProcessorFullTurnWithShot(t *testing.T) {
	c, h := setup(t, `{"transcriber":"mock"}`, &OpenAI{})
	ev := loadFixture(t, "full-turn-send.json")
	events(t, c, ev[:17]...) // up to and including the shot event
	png := []byte("\x89PNG fake image bytes")
	if r := send(t, c, &frame.ChunkDescriptor{Kind: "attachment", ID: "shot_1", Mime: "image/png"}, png, false); !r.OK {
		t.Fatalf("attachment: %+v", r)
	}
	path := filepath.Join(h.dir, "shot_1.png")
	if b, err := os.ReadFile(path); err != nil || string(b) != string(png) {
		t.Fatalf("blob not saved on arrival: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("blob mode %v", fi.Mode())
	}
	events(t, c, ev[17:]...)
	send(t, c, &frame.ChunkDescriptor{Kind: "context"}, []byte(`{"selection":"legend"}`), false)
	if r := send(t, c, nil, nil, true); !r.OK || !r.Closed {
		t.Fatalf("fin: %+v", r)
	}
	if len(h.prompts) != 1 {
		t.Fatalf("prompts = %d", len(h.prompts))
	}
	p := h.prompts[0]
	if p.Meta["shot_1"] != path || p.Root != "/repo" || !strings.Contains(p.Text, "{shot_1} region") || !strings.Contains(p.Text, `Selected text: "legend"`) {
		t.Fatalf("prompt = %+v", p)
	}
	if strings.Contains(p.Text, path) {
		t.Fatal("the body must carry the {shot_1} token, not the path")
	}
}

func TestProcessorCancelAndAbandon(t *testing.T) {
	c, h := setup(t, "", nil)
	events(t, c, loadFixture(t, "cancel-turn.json")...)
	if r := send(t, c, nil, nil, true); !r.OK || !r.Closed {
		t.Fatalf("fin: %+v", r)
	}
	c2, h2 := setup(t, "", nil)
	events(t, c2, loadFixture(t, "plain-dictation.json")...)
	c2.Abandon()
	if len(h.prompts)+len(h2.prompts) != 0 {
		t.Fatal("a cancelled or abandoned turn sent a prompt")
	}
}

type fakeOpenAI struct {
	mu          sync.Mutex
	auth        []string
	models      []string
	files       []string
	status      int
	transcript  string
	patchAnswer string
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	if f.status != 0 {
		w.WriteHeader(f.status)
		w.Write([]byte(`{"error":{"message":"quota exceeded"}}`))
		return
	}
	switch r.URL.Path {
	case "/v1/audio/transcriptions":
		r.ParseMultipartForm(1 << 20)
		f.models = append(f.models, r.FormValue("model"))
		_, fh, _ := r.FormFile("file")
		if fh != nil {
			f.files = append(f.files, fh.Filename)
		}
		json.NewEncoder(w).Encode(map[string]string{"text": f.transcript})
	case "/v1/chat/completions":
		var req struct {
			Model       string  `json:"model"`
			Temperature float64 `json:"temperature"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		f.models = append(f.models, req.Model)
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"content": f.patchAnswer}}}})
	default:
		http.NotFound(w, r)
	}
}

func fakeServer(t *testing.T, f *fakeOpenAI) *OpenAI {
	srv := httptest.NewServer(f) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return &OpenAI{BaseURL: srv.URL + "/v1", Key: "sk-test", KeyEnv: "TEST_KEY"}
}

func TestProcessorRESTTranscription(t *testing.T) {
	fake := &fakeOpenAI{transcript: "reaction diffusion on the GPU"}
	c, h := setup(t, `{"transcriber":"openai","model":"gpt-test"}`, fakeServer(t, fake))
	events(t, c, Event{Type: TypeTalkStart, Segment: 1}, Event{Type: TypeTalkEnd, Segment: 1})
	if r := send(t, c, &frame.ChunkDescriptor{Kind: "attachment", ID: "seg_1", Mime: "audio/webm;codecs=opus"}, []byte("OPUS"), false); !r.OK {
		t.Fatalf("seg: %+v", r)
	}
	send(t, c, nil, nil, true)
	if len(h.prompts) != 1 || !strings.HasSuffix(h.prompts[0].Text, "reaction diffusion on the GPU") {
		t.Fatalf("prompts = %+v", h.prompts)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if fake.auth[0] != "Bearer sk-test" || fake.models[0] != "gpt-test" || fake.files[0] != "seg_1.webm" {
		t.Fatalf("upstream saw auth=%v models=%v files=%v", fake.auth, fake.models, fake.files)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.pushes) != 1 || h.pushes[0]["kind"] != "lowered" || h.pushes[0]["threadId"] != "th" {
		t.Fatalf("pushes = %v", h.pushes)
	}
	e := h.pushes[0]["events"].([]any)[0].(map[string]any)
	if e["type"] != "transcript-final" || e["segment"].(float64) != 1 || e["text"] != "reaction diffusion on the GPU" || e["model"] != "gpt-test" {
		t.Fatalf("pushed event = %v", e)
	}
	if _, ok := e["latencyMs"]; !ok {
		t.Fatal("no latencyMs")
	}
}

func TestProcessorTranscriptionDegradesLoudly(t *testing.T) {
	tests := []struct {
		name string
		oa   func(t *testing.T) *OpenAI
		note string
	}{
		{"keyless", func(*testing.T) *OpenAI { return &OpenAI{BaseURL: "http://127.0.0.1:1", KeyEnv: "TEST_KEY"} }, "TEST_KEY is empty"},
		{"upstream error", func(t *testing.T) *OpenAI { return fakeServer(t, &fakeOpenAI{status: 429}) }, "upstream answered 429: quota exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, h := setup(t, `{"transcriber":"openai"}`, tt.oa(t))
			events(t, c, Event{Type: TypeTalkStart, Segment: 1})
			send(t, c, &frame.ChunkDescriptor{Kind: "attachment", ID: "seg_1", Mime: "audio/wav"}, []byte("RIFF"), false)
			send(t, c, nil, nil, true)
			h.mu.Lock()
			defer h.mu.Unlock()
			if len(h.pushes) != 1 {
				t.Fatalf("pushes = %v", h.pushes)
			}
			e := h.pushes[0]["events"].([]any)[0].(map[string]any)
			if e["type"] != "transcript-final" || e["text"] != "" || !strings.Contains(e["note"].(string), tt.note) {
				t.Fatalf("degraded event = %v", e)
			}
			if len(h.prompts) != 1 || !strings.Contains(h.prompts[0].Text, tt.note) {
				t.Fatalf("the prompt must name the cause: %+v", h.prompts)
			}
		})
	}
}

func TestProcessorCorrectionDiff(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: transcript\n@@\n-make the base line curb\n+make the baseline curve\n*** End Patch"
	tests := []struct {
		name      string
		answer    string
		wantPatch bool
		want      string
	}{
		{"diff applies", patch, true, "make the baseline curve"},
		{"diff does not apply: plain replacement", "*** Begin Patch\n@@\n-nope\n+x\n*** End Patch", false, "make the baseline curb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeOpenAI{patchAnswer: tt.answer}
			c, h := setup(t, `{"corrector":"openai","correctionModel":"fixer"}`, fakeServer(t, fake))
			events(t, c, final(1, "make the base line curb"),
				Event{Type: TypeCorrection, From: ip(9), To: ip(18), Original: "base line", Instruction: "baseline", Via: "typed"})
			send(t, c, nil, nil, true)
			h.mu.Lock()
			defer h.mu.Unlock()
			if len(h.pushes) != 1 {
				t.Fatalf("pushes = %v", h.pushes)
			}
			e := h.pushes[0]["events"].([]any)[0].(map[string]any)
			_, hasPatch := e["patch"]
			if e["type"] != "correction" || hasPatch != tt.wantPatch || e["model"] != "fixer" || e["original"] != "base line" || e["via"] != "typed" {
				t.Fatalf("pushed correction = %v", e)
			}
			if len(h.prompts) != 1 || !strings.HasSuffix(h.prompts[0].Text, tt.want) {
				t.Fatalf("prompt = %+v", h.prompts)
			}
		})
	}
}

// playRealtimeFixture sends the client steps of the recorded realtime wire
// sequence (events, seq-ordered PCM frames, bare fin) and returns the PCM.
func playRealtimeFixture(t *testing.T, c *channel.Conn) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/streaming/realtime-turn.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Steps []struct {
			Dir    string                 `json:"dir"`
			Chunk  *frame.ChunkDescriptor `json:"chunk"`
			Events []Event                `json:"events"`
			RawB   []int                  `json:"bytes"`
			Repeat int                    `json:"repeat"`
			Fin    bool                   `json:"fin"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	var audio []byte
	for _, s := range fx.Steps {
		if s.Dir != "c2s" {
			continue
		}
		var payload []byte
		switch {
		case s.Chunk != nil && s.Chunk.Kind == "events":
			payload, _ = json.Marshal(Batch{Events: s.Events})
		case s.Chunk != nil && s.Chunk.Kind == "audio":
			for range s.Repeat {
				for _, x := range s.RawB {
					payload = append(payload, byte(x))
				}
			}
			audio = append(audio, payload...)
		}
		if r := send(t, c, s.Chunk, payload, s.Fin); !r.OK {
			t.Fatalf("step: %+v", r)
		}
	}
	return audio
}

// TestProcessorRealtimeTurn replays the recorded realtime wire sequence
// keyless: audio frames are saved in seq order and talk-end takes the loud
// degraded path.
func TestProcessorRealtimeTurn(t *testing.T) {
	c, h := setup(t, `{"transcriber":"openai-realtime"}`, &OpenAI{KeyEnv: "TEST_KEY"})
	audio := playRealtimeFixture(t, c)
	got, err := os.ReadFile(filepath.Join(h.dir, "seg_1.pcm"))
	if err != nil || string(got) != string(audio) {
		t.Fatalf("streamed audio not saved in order: %v (%d bytes, want %d)", err, len(got), len(audio))
	}
	if len(h.prompts) != 1 || !strings.Contains(h.prompts[0].Text, "segment 1 not transcribed: realtime transcription unavailable") || !strings.Contains(h.prompts[0].Text, "TEST_KEY") {
		t.Fatalf("prompt = %+v", h.prompts)
	}
	// The degraded event has REST's shape: the model it would have used
	// and the time the attempt took.
	h.mu.Lock()
	defer h.mu.Unlock()
	var final map[string]any
	for _, p := range h.pushes {
		for _, e := range p["events"].([]any) {
			if e := e.(map[string]any); e["type"] == "transcript-final" {
				final = e
			}
		}
	}
	if final == nil || final["model"] != "realtime-test" || final["latencyMs"] == nil || final["text"] != "" {
		t.Fatalf("degraded realtime event = %v", final)
	}
}

func TestProcessorRejects(t *testing.T) {
	c, _ := setup(t, "", nil)
	tests := []struct {
		name    string
		chunk   *frame.ChunkDescriptor
		payload string
		want    string
	}{
		{"payload without chunk", nil, "x", "needs a chunk descriptor"},
		{"bad attachment id", &frame.ChunkDescriptor{Kind: "attachment", ID: "../etc"}, "x", "shot_N or seg_N"},
		{"bad events", &frame.ChunkDescriptor{Kind: "events"}, "{", "events chunk"},
		{"unknown chunk", &frame.ChunkDescriptor{Kind: "video"}, "", "unknown chunk kind"},
		{"audio without seq", &frame.ChunkDescriptor{Kind: "audio", ID: "seg_1"}, "x", "seq"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := send(t, c, tt.chunk, []byte(tt.payload), false)
			if r.OK || r.Fatal || !strings.Contains(r.Error, tt.want) {
				t.Fatalf("got %+v, want error with %q", r, tt.want)
			}
		})
	}
	c2, _ := setup(t, `{"transcriber":"carrier-pigeon"}`, nil)
	if r := send(t, c2, nil, nil, false); r.OK || !strings.Contains(r.Error, "intent.transcriber") {
		t.Fatalf("bad config: %+v", r)
	}
}

// TestSpeculativeComposeIsReused: when nothing changed since the last
// batch, fin reuses the cached compose instead of recomputing.
func TestSpeculativeComposeIsReused(t *testing.T) {
	c, h := setup(t, "", nil)
	events(t, c, loadFixture(t, "plain-dictation.json")...)
	send(t, c, nil, nil, true)
	h.mu.Lock()
	defer h.mu.Unlock()
	composes := 0
	for _, s := range h.stages {
		if s == "speculative compose" {
			composes++
		}
	}
	if composes != 1 || len(h.prompts) != 1 || !slices.Contains(h.stages, "composed intent: speculative compose reused") {
		t.Fatalf("stages %v", h.stages)
	}
}

func TestProcessorAttachmentLimit(t *testing.T) {
	c, _ := setup(t, "", nil)
	for i := 1; i <= MaxAttachments; i++ {
		if r := send(t, c, &frame.ChunkDescriptor{Kind: "attachment", ID: fmt.Sprintf("shot_%d", i), Mime: "image/png"}, []byte("x"), false); !r.OK {
			t.Fatalf("attachment %d: %+v", i, r)
		}
	}
	r := send(t, c, &frame.ChunkDescriptor{Kind: "attachment", ID: "shot_999", Mime: "image/png"}, []byte("x"), false)
	if r.OK || !strings.Contains(r.Error, "exceeds") {
		t.Fatalf("attachment over the limit: %+v", r)
	}
	if r := send(t, c, &frame.ChunkDescriptor{Kind: "attachment", ID: "shot_1", Mime: "image/png"}, []byte("y"), false); !r.OK {
		t.Fatalf("re-sending a known attachment: %+v", r)
	}
}

// TestProcessorSeamGating: the mock transcriber never calls upstream, and
// a correction that already carries a patch passes straight through
// without a paid diff, even with the openai corrector.
func TestProcessorSeamGating(t *testing.T) {
	fake := &fakeOpenAI{transcript: "never"}
	oa := fakeServer(t, fake)
	c, h := setup(t, `{"transcriber":"mock","corrector":"openai"}`, oa)
	events(t, c, loadFixture(t, "dictation-typed-correction.json")...)
	send(t, c, &frame.ChunkDescriptor{Kind: "attachment", ID: "seg_1", Mime: "audio/webm"}, []byte("OPUS"), false)
	send(t, c, nil, nil, true)
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.auth) != 0 {
		t.Fatalf("upstream was called %d times", len(fake.auth))
	}
	if len(h.prompts) != 1 || !strings.HasSuffix(h.prompts[0].Text, "make the baseline curb a bit thicker and color it ember") {
		t.Fatalf("prompt = %+v", h.prompts)
	}
}

// TestProcessorFinWaitIsBounded: fin waits for an in-flight transcription
// only up to FinWait, then composes without it.
func TestProcessorFinWaitIsBounded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	h := &host{t: t, dir: t.TempDir()}
	deps := &Deps{NewOpenAI: func() *OpenAI { return &OpenAI{BaseURL: srv.URL, Key: "k"} }, TranscribeModel: "m",
		BlobDir: func(*channel.ThreadContext) (string, error) { return h.dir, nil }, FinWait: 50 * time.Millisecond}
	c := newIntentConn(t, h, deps, `{"transcriber":"openai"}`)
	events(t, c, Event{Type: TypeTalkStart, Segment: 1})
	send(t, c, &frame.ChunkDescriptor{Kind: "attachment", ID: "seg_1", Mime: "audio/wav"}, []byte("RIFF"), false)
	if r := send(t, c, nil, nil, true); !r.OK || !r.Closed {
		t.Fatalf("fin: %+v", r)
	}
	if len(h.prompts) != 1 || !strings.Contains(h.prompts[0].Text, "[segment 1 has no final transcript]") {
		t.Fatalf("prompt = %+v", h.prompts)
	}
	if !slices.ContainsFunc(h.stages, func(s string) bool { return s == "seams" }) {
		t.Fatalf("the bounded wait is not traced: %v", h.stages)
	}
}

// TestProcessorTurnByteBudget: one turn's event log and its stored
// attachments/audio are bounded in bytes, not only in count, so a hostile
// client cannot fill memory or the disk through one thread; a frame over
// the budget is rejected (non-fatal) and the turn still lowers.
func TestProcessorTurnByteBudget(t *testing.T) {
	h := &host{t: t, dir: t.TempDir()}
	deps := &Deps{BlobDir: func(*channel.ThreadContext) (string, error) { return h.dir, nil },
		MaxTurnEventBytes: 4 << 10, MaxTurnBlobBytes: 8 << 10}
	c := newIntentConn(t, h, deps, "")
	big := strings.Repeat("x", 3<<10)
	events(t, c, Event{Type: TypeTranscriptFinal, Segment: 1, Text: StrPtr("keep this")})
	batch, _ := json.Marshal(Batch{Events: []Event{{Type: TypeTranscriptFinal, Segment: 2, Text: &big}}})
	send(t, c, &frame.ChunkDescriptor{Kind: "events"}, batch, false)
	if r := send(t, c, &frame.ChunkDescriptor{Kind: "events"}, batch, false); r.OK || !strings.Contains(r.Error, "exceeds") {
		t.Fatalf("events over the byte budget: %+v", r)
	}
	blob := make([]byte, 3<<10)
	for i, want := range []bool{true, true, false} {
		r := send(t, c, &frame.ChunkDescriptor{Kind: "attachment", ID: fmt.Sprintf("shot_%d", i+1), Mime: "image/png"}, blob, false)
		if r.OK != want {
			t.Fatalf("attachment %d: %+v, want ok=%v", i+1, r, want)
		}
	}
	// re-sending a known attachment replaces its bytes in the budget
	if r := send(t, c, &frame.ChunkDescriptor{Kind: "attachment", ID: "shot_1", Mime: "image/png"}, blob, false); !r.OK {
		t.Fatalf("re-sent attachment: %+v", r)
	}
	seq := int64(0)
	if r := send(t, c, &frame.ChunkDescriptor{Kind: "audio", ID: "seg_1", Seq: &seq, Mime: "audio/pcm;rate=24000"}, blob, false); r.OK {
		t.Fatalf("streamed audio over the byte budget: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "shot_3.png")); err == nil {
		t.Fatal("a rejected attachment was written to disk")
	}
	if r := send(t, c, nil, nil, true); !r.OK || !r.Closed {
		t.Fatalf("fin: %+v", r)
	}
	if len(h.prompts) != 1 || !strings.Contains(h.prompts[0].Text, "keep this") {
		t.Fatalf("prompts = %+v", h.prompts)
	}
}

// TestProcessorEventsCountAgainstConnectionBudget: an intent-v1 turn's
// event log counts against its connection's memory budget, shared with
// the connection's other open threads.
func TestProcessorEventsCountAgainstConnectionBudget(t *testing.T) {
	c, _ := setup(t, "", nil)
	c.MaxHeldBytes = 5 << 10
	big := strings.Repeat("x", 3<<10)
	batch, _ := json.Marshal(Batch{Events: []Event{{Type: TypeTranscriptFinal, Segment: 1, Text: &big}}})
	for i, want := range []bool{true, false} {
		b, _ := frame.Encode(frame.Envelope{V: 1, Kind: "data", ThreadID: fmt.Sprint("th", i), Chunk: &frame.ChunkDescriptor{Kind: "events"}}, batch)
		if r := c.Handle(true, b); r.OK != want || r.Fatal {
			t.Fatalf("thread %d: %+v, want ok=%v", i, r, want)
		}
	}
}

// logCount counts log records (to observe a background seam finishing).
type logCount struct {
	mu sync.Mutex
	n  int
}

func (l *logCount) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCount) Handle(context.Context, slog.Record) error {
	l.mu.Lock()
	l.n++
	l.mu.Unlock()
	return nil
}
func (l *logCount) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCount) WithGroup(string) slog.Handler      { return l }

type loggingHost struct {
	*host
	log *slog.Logger
}

func (h loggingHost) NewThread(ctx *channel.ThreadContext) { h.host.NewThread(ctx); ctx.Log = h.log }

// TestAbandonWaitsForSeams: a dropped connection cancels an in-flight
// transcription and its teardown returns only once that background seam
// finished, so the adapter's Serve (which waits for every socket's close
// path) never returns with a seam goroutine still running.
func TestAbandonWaitsForSeams(t *testing.T) {
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		entered <- struct{}{}
		select { // a hung upstream
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	oa := &OpenAI{BaseURL: srv.URL + "/v1", Key: "sk-test"}
	lc := &logCount{}
	h := loggingHost{host: &host{t: t, dir: t.TempDir()}, log: slog.New(lc)}
	deps := &Deps{NewOpenAI: func() *OpenAI { return oa }, BlobDir: func(*channel.ThreadContext) (string, error) { return h.dir, nil }}
	c := channel.NewConn(channel.Registry{"intent-v1": Format(deps)}, h, slog.Default())
	b, _ := frame.Encode(frame.Envelope{V: 1, Kind: "hello", Format: "intent-v1", Meta: &frame.HelloMeta{Intent: json.RawMessage(`{"transcriber":"openai"}`)}}, nil)
	c.Handle(true, b)
	if r := send(t, c, &frame.ChunkDescriptor{Kind: "attachment", ID: "seg_1", Mime: "audio/webm"}, []byte("OPUS"), false); !r.OK {
		t.Fatalf("segment: %+v", r)
	}
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("transcription never reached the upstream")
	}
	c.Abandon()
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.n == 0 {
		t.Fatal("Abandon returned while the cancelled transcription was still running")
	}
}

// TestSpeculationIsBounded: speculative composition runs after each batch
// only while the turn is of a realistic size; past maxSpeculateEvents a
// batch just invalidates the cache and fin composes once — so a hostile
// stream of tiny batches cannot cost quadratic CPU — and the turn still
// lowers from the full log.
func TestSpeculationIsBounded(t *testing.T) {
	c, h := setup(t, "", nil)
	const per = 1000
	batches := maxSpeculateEvents/per + 2
	for i := range batches {
		ev := make([]Event, per)
		for j := range ev {
			ev[j] = Event{Type: TypeStroke, Points: 3}
		}
		if i == batches-1 {
			ev[per-1] = Event{Type: TypeTranscriptFinal, Segment: 1, Text: StrPtr("said at the very end")}
		}
		events(t, c, ev...)
	}
	if r := send(t, c, nil, nil, true); !r.OK || !r.Closed {
		t.Fatalf("fin: %+v", r)
	}
	spec := h.stageCount("speculative compose")
	h.mu.Lock()
	defer h.mu.Unlock()
	if spec != maxSpeculateEvents/per {
		t.Fatalf("%d speculative composes over %d batches, want %d", spec, batches, maxSpeculateEvents/per)
	}
	if !slices.Contains(h.stages, "composed intent") {
		t.Fatalf("fin did not compose the unspeculated log: %v", h.stages[len(h.stages)-3:])
	}
	if len(h.prompts) != 1 || !strings.Contains(h.prompts[0].Text, "said at the very end") {
		t.Fatalf("prompts = %+v", h.prompts)
	}
}

// TestShotPathIsTheChannels: a shot's path in the prompt's meta is the
// file the channel stored its bytes in, never one the client wrote into
// the event; a shot whose bytes never came has no path.
func TestShotPathIsTheChannels(t *testing.T) {
	c, h := setup(t, `{"transcriber":"mock"}`, &OpenAI{})
	text := "look"
	events(t, c,
		Event{At: 1, Type: TypeShot, Marker: "shot_1", Path: "/home/someone/.ssh/id_rsa", Rect: &Rect{W: 1, H: 1}},
		Event{At: 2, Type: TypeShot, Marker: "shot_2", Path: "/etc/shadow", Rect: &Rect{W: 1, H: 1}},
		Event{At: 3, Type: TypeTranscriptFinal, Segment: 1, Text: &text})
	if r := send(t, c, &frame.ChunkDescriptor{Kind: "attachment", ID: "shot_2", Mime: "image/png"}, []byte("png"), false); !r.OK {
		t.Fatalf("attachment: %+v", r)
	}
	if r := send(t, c, nil, nil, true); !r.OK || !r.Closed {
		t.Fatalf("fin: %+v", r)
	}
	if len(h.prompts) != 1 {
		t.Fatalf("prompts = %d", len(h.prompts))
	}
	p := h.prompts[0]
	if _, ok := p.Meta["shot_1"]; ok || p.Meta["shot_2"] != filepath.Join(h.dir, "shot_2.png") {
		t.Fatalf("meta = %v", p.Meta)
	}
	if !strings.Contains(p.Text, "{shot_1}") || !strings.Contains(p.Text, "[image not received]") {
		t.Fatalf("text = %q", p.Text)
	}
}
