package channel

import (
	"log/slog"
	"slices"
	"strings"

	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/aiui/jsonstr"
)

// Prompt is what a thread delivers into the session.
type Prompt struct {
	// Text is the notification content, exactly as delivered.
	Text string `json:"text"`
	// Body, when set, carries the content instead of Text, already
	// encoded as JSON string contents (text-concat keeps the client's own
	// encoding), so delivery records it without decoding and encoding it
	// again. It is valid only until SendPrompt returns.
	Body *jsonstr.Buffer `json:"-"`
	// Meta are identifier-keyed string attributes (kind excluded; the
	// delivery layer adds it).
	Meta map[string]string `json:"meta,omitempty"`
	// Root is the hello's source root, used to route between agent faces.
	Root string `json:"-"`
}

// Content is the prompt's text, decoded from Body when that carries it.
func (p Prompt) Content() string {
	if p.Body == nil {
		return p.Text
	}
	s, _ := jsonstr.Decode(p.Body.Bytes())
	return s
}

// MessageMeta is what a processor learns about a frame besides its payload.
type MessageMeta struct {
	Fin   bool
	Chunk *frame.ChunkDescriptor
}

// Processor handles one thread's decoded payloads. Calls are serialized per
// connection; an error rejects that frame (non-fatal) without closing the
// thread.
type Processor interface {
	OnMessage(payload any, meta MessageMeta) error
}

// Abandoner is implemented by processors that hold resources: OnAbandon
// runs when the connection drops before the thread closed.
type Abandoner interface {
	OnAbandon()
}

// ThreadContext is handed to a format's processor factory.
type ThreadContext struct {
	ThreadID string
	// Hello is the connection's hello meta (nil when the client sent none).
	Hello *frame.HelloMeta
	// Format is the connection's format name.
	Format string
	// TraceID names the thread's trace (and its blob directory).
	TraceID string
	// Close marks the thread closed; the ack of the current frame then
	// carries closed: true.
	Close func()
	// SendPrompt delivers a prompt into the session; it is done with the
	// prompt's Body when it returns.
	SendPrompt func(Prompt) error
	// Push sends an out-of-band message to the client; it must carry a
	// kind field (acks never do).
	Push func(v any) error
	// Trace records a lowering stage on the thread's trace.
	Trace func(stage string, detail any)
	// MaxTextBytes bounds accumulated text.
	MaxTextBytes int
	// SpillDir, when set, is where a thread may keep the part of a long
	// text it is not holding in memory (in unnamed files).
	SpillDir string
	// Hold reserves n more bytes of the connection's memory budget for
	// this thread (called from OnMessage only); it fails when the
	// connection's open threads would hold too much. The reservation is
	// returned when the thread closes or the connection drops.
	Hold func(n int64) error
	Log  *slog.Logger
}

// Format pairs a codec with a processor factory.
type Format struct {
	Codec frame.Codec
	New   func(ctx *ThreadContext) Processor
}

// Registry maps format names to formats. Reload rebuilds it.
type Registry map[string]Format

// Names are the known format names, sorted.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (r Registry) known() string { return strings.Join(r.Names(), ", ") }
