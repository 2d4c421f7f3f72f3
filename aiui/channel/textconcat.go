package channel

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/aiui/jsonstr"
)

// TextConcat is the built-in text-concat format: JSON codec, { text }
// chunks concatenated verbatim until fin, which sends the text (after the
// tab/source preamble) as one prompt. An empty thread closes silently.
func TextConcat() Format {
	return Format{Codec: textCodec{}, New: func(ctx *ThreadContext) Processor { return &textConcat{ctx: ctx} }}
}

// textCodec is the JSON codec with a fast path for the payload clients
// send, exactly {"text":"…"}: its string contents are validated in place
// (one pass, no copy) and handed over as they are. Any other payload takes
// the JSON codec, with its errors.
type textCodec struct{}

func (textCodec) Name() string                 { return frame.JSON.Name() }
func (textCodec) Encode(v any) ([]byte, error) { return frame.JSON.Encode(v) }
func (textCodec) Decode(b []byte) (any, error) {
	const open, closing = `{"text":"`, `"}`
	if len(b) >= len(open)+len(closing) && string(b[:len(open)]) == open && string(b[len(b)-len(closing):]) == closing {
		c := b[len(open) : len(b)-len(closing)]
		if n, ok := jsonstr.Scan(c); ok {
			return textChunk{contents: c, decoded: n}, nil
		}
	}
	return frame.JSON.Decode(b)
}

// textChunk is a chunk's text as JSON string contents: a view into the
// frame, valid while OnMessage runs.
type textChunk struct {
	contents []byte
	decoded  int
}

// spillAfter is how much of a thread's text stays in memory; the rest
// waits for fin in a file (ThreadContext.SpillDir), so eight connections
// streaming 4 MiB prompts do not hold 32 MiB. Prompts up to this size
// (the 8 × 64 KiB threads among them) never touch the spill: it
// costs a second write and a file-to-file copy per byte.
const spillAfter = 512 << 10

// traceBytes bounds the text a trace stage shows of a prompt.
const traceBytes = 4 << 10

type textConcat struct {
	ctx  *ThreadContext
	body jsonstr.Buffer // preamble + text, encoded
	text int            // decoded bytes of text (preamble excluded)
}

func (p *textConcat) OnMessage(payload any, meta MessageMeta) error {
	switch v := payload.(type) {
	case textChunk:
		if err := p.add(v.contents, v.decoded); err != nil {
			return err
		}
	case json.RawMessage:
		if len(v) > 0 && string(v) != "null" {
			text, err := chunkText(v)
			if err != nil {
				return fmt.Errorf("text-concat payload must be { text?: string }: %v", err)
			}
			if text != nil {
				if err := p.add(jsonstr.Append(nil, *text), len(*text)); err != nil {
					return err
				}
			}
		}
	}
	if !meta.Fin {
		return nil
	}
	p.ctx.Close()
	defer p.body.Reset()
	if p.text == 0 {
		return nil
	}
	pr := Prompt{Body: &p.body, Meta: MetaAttributes(p.ctx.Hello)}
	if p.ctx.Hello != nil && p.ctx.Hello.Source != nil {
		pr.Root = p.ctx.Hello.Source.Root
	}
	preview := p.body.Preview(traceBytes)
	if p.body.Len() > traceBytes {
		preview += "…"
	}
	p.ctx.Trace("lowered prompt", Prompt{Text: preview, Meta: pr.Meta})
	return p.ctx.SendPrompt(pr)
}

// chunkText is a payload's "text" member (nil when absent or null),
// matched exactly as a client's payload.text is: decoding into a struct
// would also take "Text" or "TEXT", text the client never sent as text.
func chunkText(raw json.RawMessage) (*string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	t, ok := obj["text"]
	if !ok || string(t) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(t, &s) != nil {
		return nil, fmt.Errorf("text is %s, not a string", jsonKind(t))
	}
	return &s, nil
}

// jsonKind names the JSON type of a valid value, for errors.
func jsonKind(v json.RawMessage) string {
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// add appends one chunk's encoded text (decoded bytes long).
func (p *textConcat) add(enc []byte, decoded int) error {
	if decoded == 0 {
		return nil
	}
	if p.ctx.MaxTextBytes > 0 && p.text+decoded > p.ctx.MaxTextBytes {
		return fmt.Errorf("thread text would exceed %d bytes", p.ctx.MaxTextBytes)
	}
	if p.ctx.Hold != nil {
		if err := p.ctx.Hold(int64(len(enc))); err != nil {
			return err
		}
	}
	if p.text == 0 {
		p.body.WriteString(Preamble(p.ctx.Hello, ""))
		if p.ctx.SpillDir != "" {
			dir := p.ctx.SpillDir
			p.body.Spill = func() (*os.File, error) { return jsonstr.OpenSpill(dir) }
			p.body.SpillAfter = spillAfter
		}
	}
	if err := p.body.Write(enc, decoded); err != nil {
		return err
	}
	p.text += decoded
	return nil
}

// OnAbandon returns the thread's pooled text when its connection drops.
func (p *textConcat) OnAbandon() { p.body.Reset() }
