package channel

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/hub"
)

type fakeHost struct {
	prompts []Prompt
	pushes  []any
	traces  []string
}

func (h *fakeHost) NewThread(ctx *ThreadContext) {
	ctx.SendPrompt = func(p Prompt) error {
		// the Body is the processor's again once SendPrompt returns
		p.Text, p.Body = p.Content(), nil
		h.prompts = append(h.prompts, p)
		return nil
	}
	ctx.Push = func(v any) error { h.pushes = append(h.pushes, v); return nil }
	ctx.Trace = func(stage string, _ any) { h.traces = append(h.traces, stage) }
	ctx.MaxTextBytes = 64
}

type panicky struct{}

func (panicky) OnMessage(payload any, meta MessageMeta) error {
	if b, _ := payload.([]byte); string(b) == "panic" {
		panic("boom")
	}
	if b, _ := payload.([]byte); string(b) == "err" {
		return errors.New("nope")
	}
	return nil
}

func testRegistry() Registry {
	return Registry{
		"text-concat": TextConcat(),
		"raw-test":    {Codec: frame.Raw, New: func(*ThreadContext) Processor { return panicky{} }},
	}
}

func enc(t testing.TB, env frame.Envelope, payload string) []byte {
	b, err := frame.Encode(env, []byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hello(format string) frame.Envelope { return frame.Envelope{V: 1, Kind: "hello", Format: format} }
func data(id string, fin bool) frame.Envelope {
	return frame.Envelope{V: 1, Kind: "data", ThreadID: id, Fin: fin}
}

func newConn() (*Conn, *fakeHost) {
	h := &fakeHost{}
	return NewConn(testRegistry(), h, slog.New(slog.NewTextHandler(io.Discard, nil))), h
}

func TestFirstFrameFatal(t *testing.T) {
	nullHdr := []byte{0, 0, 0, 4, 'n', 'u', 'l', 'l'}
	tests := []struct {
		name   string
		binary bool
		frame  []byte
		want   string
	}{
		{"text frame", false, []byte("hi"), "non-binary frame"},
		{"null header", true, nullHdr, "malformed first frame"},
		{"header past end", true, []byte{0, 0, 1, 0, '{'}, "malformed first frame"},
		{"data first", true, enc(t, data("t", false), ""), "first frame must be a hello"},
		{"bad version", true, enc(t, frame.Envelope{V: 2, Kind: "hello", Format: "text-concat"}, ""), "unsupported protocol version"},
		{"hello with payload", true, enc(t, hello("text-concat"), "x"), "empty payload"},
		{"unknown format", true, enc(t, hello("nope"), ""), `unknown format "nope" (known formats: raw-test, text-concat)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newConn()
			r := c.Handle(tt.binary, tt.frame)
			if r.OK || !r.Fatal || !strings.Contains(r.Error, tt.want) {
				t.Fatalf("got %+v, want fatal containing %q", r, tt.want)
			}
		})
	}
}

func TestNonFatalAfterHello(t *testing.T) {
	c, _ := newConn()
	if r := c.Handle(true, enc(t, hello("raw-test"), "")); !r.OK {
		t.Fatalf("hello: %+v", r)
	}
	tests := []struct {
		name   string
		binary bool
		frame  []byte
		want   frame.Response
	}{
		{"no thread id", true, enc(t, data("", false), ""), frame.Response{Error: "data frame missing a usable threadId"}},
		{"huge thread id", true, enc(t, data(strings.Repeat("x", 300), false), ""), frame.Response{Error: "data frame missing a usable threadId"}},
		{"processor error", true, enc(t, data("a", false), "err"), frame.Response{ThreadID: "a", Error: "processor failed: nope"}},
		{"processor panic", true, enc(t, data("a", false), "panic"), frame.Response{ThreadID: "a", Error: "processor failed: panic: boom"}},
		{"malformed later frame", true, []byte{0, 0, 0, 4, 'n', 'u', 'l', 'l'}, frame.Response{Error: "malformed frame: header must be a JSON object"}},
		{"second hello", true, enc(t, hello("raw-test"), ""), frame.Response{Error: `expected a data frame after hello, got kind "hello"`}},
		{"ok frame", true, enc(t, data("a", false), "x"), frame.Response{OK: true, ThreadID: "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := c.Handle(tt.binary, tt.frame); r != tt.want {
				t.Fatalf("got %+v, want %+v", r, tt.want)
			}
		})
	}
	if r := c.Handle(false, []byte("x")); !r.Fatal {
		t.Fatalf("text frame after hello: %+v, want fatal", r)
	}
}

func TestTextConcat(t *testing.T) {
	c, h := newConn()
	c.Handle(true, enc(t, hello("text-concat"), ""))
	steps := []struct {
		env     frame.Envelope
		payload string
		want    frame.Response
	}{
		{data("t1", false), `{"text":"Summarize "}`, frame.Response{OK: true, ThreadID: "t1"}},
		{data("t2", false), `{"text":"other "}`, frame.Response{OK: true, ThreadID: "t2"}},
		{data("t1", false), `{}`, frame.Response{OK: true, ThreadID: "t1"}},
		{data("t1", false), `{"text":1}`, frame.Response{ThreadID: "t1", Error: "processor failed: text-concat payload must be { text?: string }: text is a number, not a string"}},
		{data("t1", false), `{bad`, frame.Response{ThreadID: "t1", Error: "payload failed to decode: payload is not valid JSON"}},
		{data("t1", true), `{"text":"this repo."}`, frame.Response{OK: true, ThreadID: "t1", Closed: true}},
		{data("t1", false), `{"text":"late"}`, frame.Response{ThreadID: "t1", Error: `thread "t1" is closed`}},
		{data("t3", true), ``, frame.Response{OK: true, ThreadID: "t3", Closed: true}},
		{data("t2", false), `{"text":"` + strings.Repeat("x", 100) + `"}`, frame.Response{ThreadID: "t2", Error: "processor failed: thread text would exceed 64 bytes"}},
		{data("t2", true), `{"text":"thread"}`, frame.Response{OK: true, ThreadID: "t2", Closed: true}},
	}
	for i, s := range steps {
		if r := c.Handle(true, enc(t, s.env, s.payload)); r != s.want {
			t.Fatalf("step %d: got %+v, want %+v", i, r, s.want)
		}
	}
	if len(h.prompts) != 2 || h.prompts[0].Text != "Summarize this repo." || h.prompts[1].Text != "other thread" {
		t.Fatalf("prompts = %+v", h.prompts)
	}
}

func TestTextConcatPreamble(t *testing.T) {
	c, h := newConn()
	env := hello("text-concat")
	tab := int64(10)
	env.Meta = &frame.HelloMeta{Tab: &frame.TabInfo{URL: "http://localhost:5173/", Title: "morpho", ChromeTabID: &tab}, Source: &frame.SourceInfo{Root: "/repo/app"}}
	c.Handle(true, enc(t, env, ""))
	c.Handle(true, enc(t, data("t", true), `{"text":"fix it"}`))
	want := "[context]\nBrowser tab: \"morpho\" (http://localhost:5173/)\nSource root: /repo/app\n[/context]\n\nfix it"
	if len(h.prompts) != 1 || h.prompts[0].Text != want || h.prompts[0].Root != "/repo/app" {
		t.Fatalf("prompt = %+v", h.prompts)
	}
	m := h.prompts[0].Meta
	if m["tab_url"] != "http://localhost:5173/" || m["chrome_tab_id"] != "10" || m["source_root"] != "/repo/app" {
		t.Fatalf("meta = %v", m)
	}
}

type abandoner struct{ abandoned *int }

func (abandoner) OnMessage(any, MessageMeta) error { return nil }
func (a abandoner) OnAbandon()                     { *a.abandoned++ }

func TestAbandon(t *testing.T) {
	n := 0
	h := &fakeHost{}
	c := NewConn(Registry{"a": {Codec: frame.Raw, New: func(*ThreadContext) Processor { return abandoner{&n} }}}, h, slog.Default())
	c.Handle(true, enc(t, hello("a"), ""))
	c.Handle(true, enc(t, data("x", false), ""))
	c.Handle(true, enc(t, data("y", false), ""))
	c.Abandon()
	if n != 2 || c.OpenThreads() != 0 {
		t.Fatalf("abandoned %d, open %d", n, c.OpenThreads())
	}
}

func FuzzConn(f *testing.F) {
	f.Add(enc(f, data("t", false), `{"text":"a"}`), enc(f, data("t", true), ``))
	f.Add([]byte{0, 0, 0, 4, 'n', 'u', 'l', 'l'}, []byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		c, _ := newConn()
		if r := c.Handle(true, enc(t, hello("text-concat"), "")); !r.OK {
			t.Fatal(r)
		}
		for _, fr := range [][]byte{a, b} {
			r := c.Handle(true, fr)
			if r.Fatal {
				t.Fatalf("binary frame after hello was fatal: %+v", r)
			}
		}
	})
}

// TestConnMemoryBudget: the bytes a connection's open threads hold are
// bounded together, not only per thread — otherwise MaxOpenThreads
// threads each just under MaxTextBytes hold gigabytes. A chunk over the
// budget is rejected (non-fatal); a thread that closes returns its bytes.
func TestConnMemoryBudget(t *testing.T) {
	c, h := newConn()
	c.MaxHeldBytes = 100
	c.Handle(true, enc(t, hello("text-concat"), ""))
	chunk := `{"text":"` + strings.Repeat("x", 40) + `"}`
	for i, want := range []bool{true, true, false} {
		r := c.Handle(true, enc(t, data(string(rune('a'+i)), false), chunk))
		if r.OK != want || r.Fatal {
			t.Fatalf("thread %d: %+v, want ok=%v", i, r, want)
		}
	}
	if r := c.Handle(true, enc(t, data("a", true), "")); !r.OK || !r.Closed {
		t.Fatalf("fin a: %+v", r)
	}
	if r := c.Handle(true, enc(t, data("c", false), chunk)); !r.OK {
		t.Fatalf("budget not returned by a closed thread: %+v", r)
	}
	if len(h.prompts) != 1 || len(h.prompts[0].Text) != 40 {
		t.Fatalf("prompts = %+v", h.prompts)
	}
}

// TestConnSharedHeldBudget: connections sharing a pool are bounded together
// (the spec has no authentication, so one peer may open many), each
// closed thread and each abandoned connection gives its bytes back, and a
// refusal leaves the connection usable.
func TestConnSharedHeldBudget(t *testing.T) {
	pool := hub.NewBudget(100)
	c1, _ := newConn()
	c2, _ := newConn()
	c1.Pool, c2.Pool = pool, pool
	for _, c := range []*Conn{c1, c2} {
		c.Handle(true, enc(t, hello("text-concat"), ""))
	}
	chunk := `{"text":"` + strings.Repeat("x", 40) + `"}`
	if r := c1.Handle(true, enc(t, data("a", false), chunk)); !r.OK {
		t.Fatal(r)
	}
	if r := c2.Handle(true, enc(t, data("a", false), chunk)); !r.OK {
		t.Fatal(r)
	}
	if r := c2.Handle(true, enc(t, data("b", false), chunk)); r.OK || r.Fatal || !strings.Contains(r.Error, "server's open threads") {
		t.Fatalf("third chunk over the shared pool: %+v", r)
	}
	if used := 100 - pool.Free(); used != 80 {
		t.Fatalf("pool holds %d, want 80", used)
	}
	if r := c1.Handle(true, enc(t, data("a", true), "")); !r.OK || !r.Closed {
		t.Fatalf("fin: %+v", r)
	}
	if used := 100 - pool.Free(); used != 40 {
		t.Fatalf("after a fin the pool holds %d, want 40", used)
	}
	c2.Abandon()
	if used := 100 - pool.Free(); used != 0 {
		t.Fatalf("after an abandoned connection the pool holds %d, want 0", used)
	}
	if r := c2.Handle(true, enc(t, data("c", false), chunk)); !r.OK {
		t.Fatalf("after room came back: %+v", r)
	}
}
