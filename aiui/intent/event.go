package intent

import (
	"encoding/json"
	"fmt"
)

// Rect is a screen rectangle in CSS pixels.
type Rect struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	W float64 `json:"w"`
	H float64 `json:"h"`
}

// Component is one UI component a shot covers.
type Component struct {
	Component string `json:"component,omitempty"`
	Source    string `json:"source,omitempty"`
	Rect      *Rect  `json:"rect,omitempty"`
}

// Event is one IntentEvent. Only the fields the lowering reads are typed;
// the rest of the log is carried by type-specific fields with omitempty.
type Event struct {
	At      float64 `json:"at"`
	Type    string  `json:"type"`
	On      *bool   `json:"on,omitempty"`
	Trigger string  `json:"trigger,omitempty"`
	Segment int     `json:"segment,omitempty"`
	MS      float64 `json:"ms,omitempty"`
	Text    *string `json:"text,omitempty"`
	Mode    string  `json:"mode,omitempty"`
	Reason  string  `json:"reason,omitempty"`
	// shot
	Marker     string      `json:"marker,omitempty"`
	Rect       *Rect       `json:"rect,omitempty"`
	Components []Component `json:"components,omitempty"`
	// Path is wired by the channel when the shot's bytes arrive.
	Path string `json:"path,omitempty"`
	// stroke
	Points int   `json:"points,omitempty"`
	Bounds *Rect `json:"bounds,omitempty"`
	// correction
	From        *int    `json:"from,omitempty"`
	To          *int    `json:"to,omitempty"`
	Original    string  `json:"original,omitempty"`
	Instruction string  `json:"instruction,omitempty"`
	Via         string  `json:"via,omitempty"`
	Patch       string  `json:"patch,omitempty"`
	Model       string  `json:"model,omitempty"`
	LatencyMS   float64 `json:"latencyMs,omitempty"`
	// Note names the cause when a server-side seam degraded.
	Note string `json:"note,omitempty"`
}

// Event types the lowering reads.
const (
	TypeTalkStart       = "talk-start"
	TypeTalkEnd         = "talk-end"
	TypeTranscriptDelta = "transcript-delta"
	TypeTranscriptFinal = "transcript-final"
	TypeShot            = "shot"
	TypeStroke          = "stroke"
	TypeCorrection      = "correction"
	TypeThreadClose     = "thread-close"
)

// MaxEventsPerTurn bounds one turn's log so a hostile client cannot grow
// the processor's memory without limit.
const MaxEventsPerTurn = 100_000

// Batch is the payload of an { kind: "events" } chunk.
type Batch struct {
	Events []Event `json:"events"`
}

// ParseBatch decodes an events chunk.
func ParseBatch(b []byte) ([]Event, error) {
	var batch Batch
	if err := json.Unmarshal(b, &batch); err != nil {
		return nil, fmt.Errorf("events chunk is not { events: IntentEvent[] }: %v", err)
	}
	for i, e := range batch.Events {
		if e.Type == "" {
			return nil, fmt.Errorf("events[%d] has no type", i)
		}
	}
	return batch.Events, nil
}

// StrPtr returns a pointer to s (for Text fields).
func StrPtr(s string) *string { return &s }
