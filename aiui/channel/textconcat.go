package channel

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hubdev/hub/aiui/frame"
)

// TextConcat is the built-in text-concat format: JSON codec, { text }
// chunks concatenated verbatim until fin, which sends the text (after the
// tab/source preamble) as one prompt. An empty thread closes silently.
func TextConcat() Format {
	return Format{Codec: frame.JSON, New: func(ctx *ThreadContext) Processor { return &textConcat{ctx: ctx} }}
}

type textConcat struct {
	ctx *ThreadContext
	buf strings.Builder
}

func (p *textConcat) OnMessage(payload any, meta MessageMeta) error {
	if raw, ok := payload.(json.RawMessage); ok && len(raw) > 0 && string(raw) != "null" {
		var chunk struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(raw, &chunk); err != nil {
			return fmt.Errorf("text-concat payload must be { text?: string }: %v", err)
		}
		if chunk.Text != nil {
			if p.ctx.MaxTextBytes > 0 && p.buf.Len()+len(*chunk.Text) > p.ctx.MaxTextBytes {
				return fmt.Errorf("thread text would exceed %d bytes", p.ctx.MaxTextBytes)
			}
			if p.ctx.Hold != nil {
				if err := p.ctx.Hold(int64(len(*chunk.Text))); err != nil {
					return err
				}
			}
			p.buf.WriteString(*chunk.Text)
		}
	}
	if !meta.Fin {
		return nil
	}
	p.ctx.Close()
	if p.buf.Len() == 0 {
		return nil
	}
	pr := Prompt{Text: Preamble(p.ctx.Hello, "") + p.buf.String(), Meta: MetaAttributes(p.ctx.Hello)}
	if p.ctx.Hello != nil && p.ctx.Hello.Source != nil {
		pr.Root = p.ctx.Hello.Source.Root
	}
	p.ctx.Trace("lowered prompt", pr)
	return p.ctx.SendPrompt(pr)
}
