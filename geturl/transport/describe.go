package transport

// ParamInfo is one parameter of a route as a machine-readable manifest
// describes it (the /manifest route): what a strict binding accepts.
type ParamInfo struct {
	Name    string   `json:"name"`
	Aliases []string `json:"aliases,omitempty"`
	Type    string   `json:"type"` // text, int, bool or enum
	Min     *int     `json:"min,omitempty"`
	Max     *int     `json:"max,omitempty"`
	// Clamp: an out-of-range number is refused with the clamped URL as
	// its repair.
	Clamp  bool     `json:"clamp,omitempty"`
	Values []string `json:"values,omitempty"`
	// Repeat is how many times it may appear, when more than once.
	Repeat   int  `json:"repeat,omitempty"`
	Required bool `json:"required,omitempty"`
	// Empty: an empty value means something (otherwise it is refused).
	Empty  bool `json:"empty,omitempty"`
	MaxLen int  `json:"maxBytes,omitempty"`
}

// SpecInfo is a route's whole parameter contract as a manifest describes
// it.
type SpecInfo struct {
	Params []ParamInfo `json:"params"`
	// Raw is what a raw= tail carries on the route, "" when it takes none.
	Raw string `json:"raw,omitempty"`
	// OneOf lists groups of which at most one may be given ("raw" is the
	// raw= tail); Needed marks those of which exactly one must be.
	OneOf  [][]string `json:"oneOf,omitempty"`
	Needed [][]string `json:"oneRequired,omitempty"`
	// Requires lists [a, b]: a given needs b given.
	Requires [][2]string `json:"requires,omitempty"`
}

// Describe returns the spec's contract. Validate's route-specific rules
// are not expressible as data and are not described.
func (s *Spec) Describe() SpecInfo {
	out := SpecInfo{Params: make([]ParamInfo, 0, len(s.Params)), Requires: s.Requires}
	if s.Raw {
		out.Raw = s.RawMeaning
		if out.Raw == "" {
			out.Raw = "content"
		}
	}
	for i := range s.Params {
		p := &s.Params[i]
		pi := ParamInfo{Name: p.Name, Aliases: p.Aliases, Required: p.Required, Empty: p.AllowEmpty}
		if p.Repeat > 1 {
			pi.Repeat = p.Repeat
		}
		switch p.Kind {
		case Int:
			lo, hi := p.Min, p.Max
			pi.Type, pi.Min, pi.Max, pi.Clamp = "int", &lo, &hi, p.Clamp
		case Bool:
			pi.Type = "bool"
		case Enum:
			pi.Type, pi.Values = "enum", p.Values
		default:
			pi.Type, pi.MaxLen = "text", p.MaxLen
		}
		out.Params = append(out.Params, pi)
	}
	for _, g := range s.Groups {
		if g.Required {
			out.Needed = append(out.Needed, g.Names)
		} else {
			out.OneOf = append(out.OneOf, g.Names)
		}
	}
	return out
}
