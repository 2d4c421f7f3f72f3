package intent

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Policy says how corrections are applied (intent.correctionPolicy).
type Policy string

// Correction policies. The spec names the knob but not its values; these
// are the ones this channel understands.
const (
	// PolicyPatch applies a correction's V4A patch when it applies, and
	// falls back to plain replacement otherwise (the default).
	PolicyPatch Policy = "patch"
	// PolicyReplace ignores patches and always replaces original → instruction.
	PolicyReplace Policy = "replace"
	// PolicyIgnore drops corrections: the raw transcript is sent.
	PolicyIgnore Policy = "ignore"
)

// ParsePolicy maps a config string to a Policy; "" is the default.
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case "", PolicyPatch:
		return PolicyPatch, nil
	case PolicyReplace, PolicyIgnore:
		return Policy(s), nil
	}
	return "", fmt.Errorf("correctionPolicy must be patch, replace or ignore, got %q", s)
}

// Item kinds in a composed turn, in timeline order.
const (
	ItemSegment = "segment"
	ItemShot    = "shot"
	ItemInk     = "ink"
)

// Item is one piece of the composed turn.
type Item struct {
	Kind    string  `json:"kind"`
	Segment int     `json:"segment,omitempty"`
	Text    string  `json:"text,omitempty"`
	Final   bool    `json:"final,omitempty"`
	Note    string  `json:"note,omitempty"`
	Shot    *Event  `json:"shot,omitempty"`
	Strokes []Event `json:"strokes,omitempty"`
}

// Composed is the pure fold of a turn's event log.
type Composed struct {
	Items     []Item   `json:"items"`
	Cancelled bool     `json:"cancelled,omitempty"`
	Closed    bool     `json:"closed,omitempty"`
	Notes     []string `json:"notes,omitempty"`
}

// Transcript is the current transcript document: one line per segment
// with a final transcript, in segment order. Corrections address it.
func (c *Composed) Transcript() string {
	var lines []string
	for _, it := range c.Items {
		if it.Kind == ItemSegment && it.Final {
			lines = append(lines, it.Text)
		}
	}
	return strings.Join(lines, "\n")
}

// Compose folds events into a turn. It is pure and cheap, so the processor
// runs it speculatively after every mutating batch. Only transcript-final
// texts count (deltas are previews and never change the compose).
func Compose(events []Event, policy Policy) *Composed {
	c := &Composed{}
	segIdx := map[int]int{}     // segment → index in Items
	shotIdx := map[string]int{} // marker → index in Items
	inkOpen := -1               // index of the ink item collecting strokes
	segment := func(n int) *Item {
		if i, ok := segIdx[n]; ok {
			return &c.Items[i]
		}
		c.Items = append(c.Items, Item{Kind: ItemSegment, Segment: n})
		segIdx[n] = len(c.Items) - 1
		inkOpen = -1
		return &c.Items[len(c.Items)-1]
	}
	for _, e := range events {
		switch e.Type {
		case TypeTalkStart, TypeTalkEnd, TypeTranscriptDelta:
			if e.Segment > 0 {
				segment(e.Segment)
			}
		case TypeTranscriptFinal:
			if e.Segment <= 0 {
				continue
			}
			it := segment(e.Segment)
			it.Final = true
			it.Text = ""
			if e.Text != nil {
				it.Text = strings.TrimSpace(*e.Text)
			}
			it.Note = e.Note
		case TypeStroke:
			if inkOpen < 0 {
				c.Items = append(c.Items, Item{Kind: ItemInk})
				inkOpen = len(c.Items) - 1
			}
			c.Items[inkOpen].Strokes = append(c.Items[inkOpen].Strokes, e)
		case TypeShot:
			if e.Marker == "" {
				continue
			}
			shot := e
			if i, ok := shotIdx[e.Marker]; ok {
				if shot.Path == "" {
					shot.Path = c.Items[i].Shot.Path
				}
				c.Items[i].Shot = &shot
				continue
			}
			c.Items = append(c.Items, Item{Kind: ItemShot, Shot: &shot})
			shotIdx[e.Marker] = len(c.Items) - 1
			inkOpen = -1
		case TypeCorrection:
			if policy == PolicyIgnore {
				continue
			}
			if note := c.applyCorrection(e, policy); note != "" {
				c.Notes = append(c.Notes, note)
			}
		case TypeThreadClose:
			if e.Reason == "cancel" {
				c.Cancelled = true
			} else {
				c.Closed = true
			}
		}
	}
	return c
}

// applyCorrection rewrites the transcript document and spreads its lines
// back over the final segments. It returns a note when nothing applied.
func (c *Composed) applyCorrection(e Event, policy Policy) string {
	doc := c.Transcript()
	next, ok := "", false
	if policy == PolicyPatch && e.Patch != "" {
		if out, err := ApplyPatch(doc, e.Patch); err == nil {
			next, ok = out, true
		}
	}
	if !ok {
		next, ok = replace(doc, e)
	}
	if !ok {
		return fmt.Sprintf("correction %q → %q not applied: text not found", e.Original, e.Instruction)
	}
	lines := strings.Split(next, "\n")
	var finals []*Item
	for i := range c.Items {
		if c.Items[i].Kind == ItemSegment && c.Items[i].Final {
			finals = append(finals, &c.Items[i])
		}
	}
	for i, it := range finals {
		switch {
		case i >= len(lines):
			it.Text = ""
		case i == len(finals)-1:
			it.Text = strings.Join(lines[i:], " ")
		default:
			it.Text = lines[i]
		}
	}
	return ""
}

// replace applies a correction as plain replacement: the UTF-16 range
// [from, to) when it still holds original, else the first occurrence of
// original.
func replace(doc string, e Event) (string, bool) {
	if e.From != nil && e.To != nil {
		u := utf16.Encode([]rune(doc))
		f, t := *e.From, *e.To
		if f >= 0 && f <= t && t <= len(u) && string(utf16.Decode(u[f:t])) == e.Original {
			return string(utf16.Decode(u[:f])) + e.Instruction + string(utf16.Decode(u[t:])), true
		}
	}
	if e.Original != "" && strings.Contains(doc, e.Original) {
		return strings.Replace(doc, e.Original, e.Instruction, 1), true
	}
	return doc, false
}

// Body renders the Option-C body: segment transcripts, ink notes and
// {shot_N} tokens, one per line in timeline order.
func (c *Composed) Body() string {
	var out []string
	for _, it := range c.Items {
		switch it.Kind {
		case ItemSegment:
			switch {
			case it.Text != "":
				out = append(out, it.Text)
			case it.Note != "":
				out = append(out, fmt.Sprintf("[segment %d not transcribed: %s]", it.Segment, it.Note))
			case !it.Final:
				out = append(out, fmt.Sprintf("[segment %d has no final transcript]", it.Segment))
			}
		case ItemInk:
			out = append(out, inkLine(it.Strokes))
		case ItemShot:
			out = append(out, shotLine(it.Shot))
		}
	}
	for _, n := range c.Notes {
		out = append(out, "["+n+"]")
	}
	return strings.Join(out, "\n")
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func rectText(r *Rect) string {
	return fmt.Sprintf("x=%s y=%s w=%s h=%s", num(r.X), num(r.Y), num(r.W), num(r.H))
}

func inkLine(strokes []Event) string {
	var u *Rect
	for _, s := range strokes {
		if s.Bounds == nil {
			continue
		}
		b := *s.Bounds
		if u == nil {
			u = &b
			continue
		}
		x1, y1 := max(u.X+u.W, b.X+b.W), max(u.Y+u.H, b.Y+b.H)
		u.X, u.Y = min(u.X, b.X), min(u.Y, b.Y)
		u.W, u.H = x1-u.X, y1-u.Y
	}
	noun := "stroke"
	if len(strokes) != 1 {
		noun = "strokes"
	}
	if u == nil {
		return fmt.Sprintf("(ink: %d %s)", len(strokes), noun)
	}
	return fmt.Sprintf("(ink: %d %s around %s)", len(strokes), noun, rectText(u))
}

func shotLine(s *Event) string {
	line := "{" + s.Marker + "}"
	if s.Rect != nil {
		line += " region " + rectText(s.Rect)
	}
	var comps []string
	for _, c := range s.Components {
		if c.Component == "" {
			continue
		}
		if c.Source != "" {
			comps = append(comps, fmt.Sprintf("%s (%s)", c.Component, c.Source))
		} else {
			comps = append(comps, c.Component)
		}
	}
	if len(comps) > 0 {
		line += "; components: " + strings.Join(comps, ", ")
	}
	if s.Path == "" {
		line += " [image not received]"
	}
	return line
}
