package intent

import (
	"bytes"
	"encoding/json"
	"errors"
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

// ParseBatch decodes an events chunk of at most MaxEventsPerTurn events.
func ParseBatch(b []byte) ([]Event, error) { return ParseBatchMax(b, MaxEventsPerTurn) }

// ParseBatchMax decodes an events chunk, refusing one of more than max
// events as soon as it gets there: a 16 MiB batch of the smallest events
// is over a million of them, and decoding it whole before counting took
// more than a gigabyte.
func ParseBatchMax(b []byte, max int) ([]Event, error) {
	batch := struct {
		Events cappedEvents `json:"events"`
	}{Events: cappedEvents{max: max}}
	if err := json.Unmarshal(b, &batch); err != nil {
		return nil, fmt.Errorf("events chunk is not { events: IntentEvent[] }: %v", err)
	}
	for i, e := range batch.Events.list {
		if e.Type == "" {
			return nil, fmt.Errorf("events[%d] has no type", i)
		}
	}
	return batch.Events.list, nil
}

// cappedEvents decodes an events array one event at a time, up to max.
type cappedEvents struct {
	max  int
	list []Event
}

func (c *cappedEvents) UnmarshalJSON(b []byte) error {
	c.list = nil // a repeated key replaces, as for a slice
	if string(b) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return errors.New("events must be an array")
	}
	for dec.More() {
		if len(c.list) >= c.max {
			return fmt.Errorf("a turn holds at most %d events", MaxEventsPerTurn)
		}
		var e Event
		if err := dec.Decode(&e); err != nil {
			return err
		}
		c.list = append(c.list, e)
	}
	_, err := dec.Token() // the closing ]
	return err
}

// StrPtr returns a pointer to s (for Text fields).
func StrPtr(s string) *string { return &s }
