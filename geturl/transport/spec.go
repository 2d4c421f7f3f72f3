package transport

import (
	"regexp"
	"strings"
	"sync"
)

// Kind is the type of a parameter's value.
type Kind uint8

const (
	// Text is any decoded text: paths, patterns, content, identifiers.
	Text Kind = iota
	// Int is a decimal integer (optional leading -) within [Min, Max].
	Int
	// Bool is exactly 1, 0, true or false.
	Bool
	// Enum is one of Values, exactly.
	Enum
)

// Param declares one accepted parameter of a route.
type Param struct {
	Name    string   // canonical name
	Aliases []string // accepted shorthands; mixing spellings is a conflict
	Kind    Kind
	Min     int  // Int: smallest accepted value
	Max     int  // Int: largest accepted value
	Clamp   bool // Int: an out-of-range number is repaired to the nearest bound
	Values  []string
	// Repeat is how many times the parameter may appear; 0 means once.
	Repeat     int
	Required   bool
	AllowEmpty bool // an empty value is meaningful (otherwise it is refused, repaired by dropping it)
	MaxLen     int  // Text: the longest decoded value in bytes; 0 means no own limit
	// Check validates a decoded Text value further; it returns a problem
	// ("must match ^[a-z]+$") or "".
	Check func(string) string
}

// Group is a set of parameters of which at most one may be present (exactly
// one when Required). The name "raw" stands for the raw= tail, so content
// transports (raw vs blob vs a text parameter) form a Group.
type Group struct {
	Names    []string
	Code     string // the error when more than one is present; CodeConflictingParams if empty
	Required bool
}

// Spec is the strict parameter contract of one route.
type Spec struct {
	Route  string // the compact route, e.g. "/r"; repair URLs use it
	Params []Param
	// Raw says whether the route accepts a raw= tail, and RawMeaning what it
	// carries (for hints: "search text", "file content").
	Raw        bool
	RawMeaning string
	Groups     []Group
	// Requires lists {a, b} pairs: a present needs b present.
	Requires [][2]string
	// Validate checks what only the route can judge about parameters that
	// bound cleanly (a line range paired with its path, bg=1 with
	// timeout=). Binding runs it too, so a repair URL is only offered when
	// the corrected request passes it: a repair that the route would then
	// refuse is no repair. It returns nil when the arguments are fine.
	Validate func(*Args) *Error

	once    sync.Once
	control map[string]bool // names that are misplaced when found after raw=
	hint    string          // "known parameters: …"
}

// ControlNames are the parameters that are refused as misplaced when they
// appear after raw= on any route (the spec's control parameters), in
// addition to the route's own names.
var ControlNames = []string{"wait", "run", "call", "bg", "path", "count", "blob"}

func (s *Spec) init() {
	s.once.Do(func() {
		s.control = map[string]bool{}
		for _, n := range ControlNames {
			s.control[n] = true
		}
		var known []string
		for _, p := range s.Params {
			s.control[p.Name] = true
			k := p.Name
			for _, a := range p.Aliases {
				s.control[a] = true
			}
			if len(p.Aliases) > 0 {
				k += " (alias " + strings.Join(p.Aliases, ", ") + ")"
			}
			known = append(known, k)
		}
		if s.Raw {
			known = append(known, "raw (last)")
		}
		if len(known) == 0 {
			s.hint = s.Route + " takes no parameters"
		} else {
			s.hint = "parameters of " + s.Route + ": " + strings.Join(known, ", ")
		}
	})
}

// lookup finds the parameter a key names, canonically or by alias.
func (s *Spec) lookup(key string) (idx int, alias bool) {
	for i := range s.Params {
		p := &s.Params[i]
		if p.Name == key {
			return i, false
		}
		for _, a := range p.Aliases {
			if a == key {
				return i, true
			}
		}
	}
	return -1, false
}

// index returns the position of a canonical name, or -1.
func (s *Spec) index(name string) int {
	for i := range s.Params {
		if s.Params[i].Name == name {
			return i
		}
	}
	return -1
}

// Known returns the hint listing the route's parameters.
func (s *Spec) Known() string {
	s.init()
	return s.hint
}

// Shared parameter declarations, so every route spells them the same way.

var nonceRE = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)

func checkNonce(v string) string {
	if !nonceRE.MatchString(v) {
		return "must match ^[A-Za-z0-9._:-]+$"
	}
	return ""
}

// WaitParam is wait=0..MaxWait milliseconds; an out-of-range number is
// refused with the clamped URL as its repair.
func WaitParam() Param {
	return Param{Name: "wait", Kind: Int, Min: 0, Max: MaxWait, Clamp: true}
}

// RunParam is run=<nonce>, the intentional-repeat nonce.
func RunParam() Param {
	return Param{Name: "run", Kind: Text, MaxLen: 64, Check: checkNonce}
}

// CallParam is call=<id>, an explicit journal call id.
func CallParam() Param {
	return Param{Name: "call", Kind: Text, MaxLen: 128, Check: checkNonce}
}
