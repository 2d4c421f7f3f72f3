package intent

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Transcriber names (intent.transcriber).
const (
	TranscriberMock     = "mock"
	TranscriberOpenAI   = "openai"
	TranscriberRealtime = "openai-realtime"
)

// Config is the part of the hello's meta.intent (the client's
// IntentPipelineConfig view) that the processor reads. Unknown fields are
// ignored; the ones read are validated.
type Config struct {
	Transcriber      string          `json:"transcriber"`
	Model            string          `json:"model"`
	Corrector        string          `json:"corrector"`
	CorrectionModel  string          `json:"correctionModel"`
	CorrectionPolicy string          `json:"correctionPolicy"`
	Passes           json.RawMessage `json:"passes"`
	RealtimeModel    string          `json:"realtimeModel"`
	RealtimeDelay    string          `json:"realtimeDelay"`

	policy Policy
	passes []string
}

// Condition pass names (identity stubs today; the structure is what counts).
const (
	PassSilenceTrim = "silenceTrim"
	PassDownscale   = "downscale"
)

var realtimeDelays = []string{"", "minimal", "low", "medium", "high", "xhigh"}

// ParseConfig reads and validates meta.intent. A missing config is the
// mock transcriber with no server-side corrector.
func ParseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &c); err != nil {
			return c, fmt.Errorf("hello meta.intent is not an object with the expected fields: %v", err)
		}
	}
	switch c.Transcriber {
	case "":
		c.Transcriber = TranscriberMock
	case TranscriberMock, TranscriberOpenAI, TranscriberRealtime:
	default:
		return c, fmt.Errorf("intent.transcriber must be mock, openai or openai-realtime, got %q", c.Transcriber)
	}
	switch c.Corrector {
	case "", "mock", "none", "openai":
	default:
		return c, fmt.Errorf("intent.corrector must be mock or openai, got %q", c.Corrector)
	}
	p, err := ParsePolicy(c.CorrectionPolicy)
	if err != nil {
		return c, fmt.Errorf("intent.%v", err)
	}
	c.policy = p
	if !slices.Contains(realtimeDelays, c.RealtimeDelay) {
		return c, fmt.Errorf("intent.realtimeDelay must be one of minimal, low, medium, high, xhigh, got %q", c.RealtimeDelay)
	}
	if c.passes, err = parsePasses(c.Passes); err != nil {
		return c, err
	}
	return c, nil
}

// parsePasses accepts either {"silenceTrim": true, …} or ["silenceTrim", …];
// with nothing given, both passes are on.
func parsePasses(raw json.RawMessage) ([]string, error) {
	all := []string{PassSilenceTrim, PassDownscale}
	if len(raw) == 0 || string(raw) == "null" {
		return all, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list, nil
	}
	var m map[string]bool
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("intent.passes must be a list of names or an object of booleans")
	}
	var on []string
	for _, p := range all {
		if v, ok := m[p]; !ok || v {
			on = append(on, p)
		}
	}
	return on, nil
}

// Policy is the parsed correction policy.
func (c Config) Policy() Policy { return c.policy }

// PassOn reports whether a condition pass is enabled.
func (c Config) PassOn(name string) bool { return slices.Contains(c.passes, name) }
