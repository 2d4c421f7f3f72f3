package transport

import (
	"strconv"
	"strings"
)

// issue is one problem found while binding, with its deterministic
// correction when there is one.
type issue struct {
	code   string
	detail string
	hint   string
	fix    func(*draft) // nil: no deterministic correction
}

// occurrence is one bound appearance of a declared parameter.
type occurrence struct {
	param int    // index into Spec.Params
	pair  int    // index into Target.Pairs
	key   string // the spelling used
	val   string // decoded
}

// Bind decodes t's parameters and checks them against spec. base is the
// exact capability base (e.g. https://host/v0/<tok>) that repair URLs start
// with. On failure the *Error names every problem found; when all of them
// have deterministic corrections it carries the repair URL, which has been
// bound again to be sure it is clean.
func Bind(t *Target, spec *Spec, base string) (*Args, *Error) {
	spec.init()
	args, issues := bindOnce(t, spec)
	if len(issues) == 0 {
		return args, nil
	}
	return nil, refusal(t, spec, base, issues)
}

func bindOnce(t *Target, s *Spec) (*Args, []issue) {
	a := &Args{spec: s, vals: make([][]string, len(s.Params))}
	var issues []issue
	add := func(is issue) { issues = append(issues, is) }
	written := make([]bool, len(s.Params)) // written at all, even if refused or misplaced

	if t.HasRaw {
		if !s.Raw {
			add(issue{code: CodeUnknownParameter, detail: "raw", hint: s.Route + " takes no raw= content; " + s.hint})
		} else {
			content, moved, movable := splitTail(t.Tail, s.control)
			if len(moved) > 0 {
				names := make([]string, len(moved))
				for i, p := range moved {
					names[i] = p.Key
					// Written, only in the wrong place: not also missing
					// (moving it is the correction).
					if idx, _ := s.lookup(p.Key); idx >= 0 {
						written[idx] = true
					}
				}
				is := issue{
					code:   CodeMisplacedControl,
					detail: strings.Join(names, ", ") + " after raw=",
					hint:   "control parameters go before raw=; if &" + names[0] + "= is content, write the & as ~a",
				}
				if movable {
					is.fix = func(d *draft) {
						d.tail = content
						for _, p := range moved {
							d.pairs = append(d.pairs, dpair{Pair: p})
						}
					}
				}
				add(is)
			}
			a.raw, a.hasRaw = Decode(content), true
			if len(a.raw) > MaxRaw {
				e := rawTooLarge(len(a.raw), "decoded")
				add(issue{code: e.Code, detail: e.Detail, hint: e.Hint})
			}
		}
	}

	occs := make([]occurrence, 0, len(t.Pairs))
	for i, p := range t.Pairs {
		idx, _ := s.lookup(p.Key)
		if idx < 0 {
			is, meant := unknownParam(s, i, p)
			if meant >= 0 {
				written[meant] = true // its correction supplies it
			}
			add(is)
			continue
		}
		written[idx] = true
		prm := &s.Params[idx]
		if p.Value == "" && !prm.AllowEmpty {
			i := i
			is := issue{
				code:   CodeEmptyParameter,
				detail: p.Key + " has no value",
				hint:   "omit optional parameters you have no value for",
				fix:    func(d *draft) { d.pairs[i].drop = true },
			}
			if prm.Kind == Bool && !p.HasEq {
				// A bare flag (bg, regex) means "on" to many command
				// lines: dropping it would turn it off, so it is no
				// placeholder to drop but a boolean without its value.
				is = issue{code: CodeInvalidParameter, detail: p.Key + " has no value", hint: describe(prm)}
			}
			add(is)
			continue
		}
		v := Decode(p.Value)
		if is, ok := checkValue(prm, i, p.Key, v); !ok {
			add(is)
			continue
		}
		occs = append(occs, occurrence{param: idx, pair: i, key: p.Key, val: v})
	}

	// Group the occurrences by parameter, in request order within each, in
	// one array (a counting sort); each parameter's values share another.
	var counts [32]int // offsets and cursors for up to 15 parameters without allocating
	np := len(s.Params) + 1
	ints := counts[:]
	if 2*np > len(counts) {
		ints = make([]int, 2*np)
	}
	starts, next := ints[:np], ints[np:2*np]
	for _, o := range occs {
		starts[o.param+1]++
	}
	for pi := range s.Params {
		starts[pi+1] += starts[pi]
	}
	copy(next, starts) // where each group's next occurrence goes
	grouped := make([]occurrence, len(occs))
	all := make([]string, len(occs))
	for _, o := range occs {
		grouped[next[o.param]] = o
		next[o.param]++
	}
	for pi := range s.Params {
		prm := &s.Params[pi]
		lo, hi := starts[pi], starts[pi+1]
		if lo == hi {
			continue
		}
		mine := grouped[lo:hi:hi] // never written again: the fixes below may keep it
		if is, ok := checkOccurrences(prm, mine); !ok {
			add(is)
			continue
		}
		vals := all[lo:hi:hi] // capped: a caller's append cannot reach the next parameter's values
		for i, o := range mine {
			vals[i] = o.val
		}
		a.vals[pi] = vals
	}

	present := func(name string) bool {
		if name == "raw" {
			return t.HasRaw && s.Raw
		}
		i := s.index(name)
		return i >= 0 && written[i]
	}
	for _, g := range s.Groups {
		var given []string
		for _, n := range g.Names {
			if present(n) {
				given = append(given, n)
			}
		}
		switch {
		case len(given) > 1:
			code := g.Code
			if code == "" {
				code = CodeConflictingParams
			}
			add(issue{code: code, detail: strings.Join(given, " and ") + " together", hint: "give only one of " + strings.Join(g.Names, ", ")})
		case len(given) == 0 && g.Required:
			add(issue{code: CodeMissingParameter, detail: "one of " + strings.Join(g.Names, ", "), hint: s.hint})
		}
	}
	for _, r := range s.Requires {
		if present(r[0]) && !present(r[1]) {
			add(issue{code: CodeMissingParameter, detail: r[1] + " (needed by " + r[0] + ")", hint: s.hint})
		}
	}
	for pi := range s.Params {
		prm := &s.Params[pi]
		if prm.Required && !written[pi] {
			add(issue{code: CodeMissingParameter, detail: prm.Name, hint: s.hint})
		}
	}
	if len(issues) > 0 {
		return nil, issues
	}
	a.order = occs
	if s.Validate != nil {
		if e := s.Validate(a); e != nil {
			return nil, []issue{{code: e.Code, detail: e.Detail, hint: e.Hint}}
		}
	}
	return a, nil
}

// splitTail separates the raw tail's content from parameters written after
// it by mistake: a literal & followed by a control name and =. The moved
// parameters can be put back before raw= deterministically only when
// nothing but such parameters follows the first of them.
func splitTail(tail string, control map[string]bool) (content string, moved []Pair, movable bool) {
	first := -1
	movable = true
	for i := 0; i < len(tail); i++ {
		if tail[i] != '&' {
			continue
		}
		seg := tail[i+1:]
		if j := strings.IndexByte(seg, '&'); j >= 0 {
			seg = seg[:j]
		}
		k, v, eq := strings.Cut(seg, "=")
		if eq && control[k] {
			if first < 0 {
				first = i
			}
			moved = append(moved, Pair{Key: k, Value: v, HasEq: true})
		} else if first >= 0 {
			movable = false
		}
		i += len(seg)
	}
	if first < 0 {
		return tail, nil, false
	}
	return tail[:first], moved, movable
}

// unknownParam reports a key the route does not declare, and which declared
// parameter it is an obvious typo of (-1 if none).
func unknownParam(s *Spec, i int, p Pair) (issue, int) {
	is := issue{code: CodeUnknownParameter, detail: p.Key, hint: s.hint}
	if p.Key == "" {
		is.detail = "a parameter with no name"
	}
	if p.Key == "raw" {
		is.code, is.detail = CodeInvalidParameter, "raw needs = and must be the last parameter"
		return is, -1
	}
	c, ok := typoCandidate(s, p.Key)
	if !ok {
		return is, -1
	}
	is.hint = "did you mean " + c + "? " + s.hint
	is.fix = func(d *draft) { d.pairs[i].Key = c }
	idx, _ := s.lookup(c)
	return is, idx
}

// checkValue validates one decoded value against its declaration.
func checkValue(prm *Param, i int, key, v string) (issue, bool) {
	bad := func(code, why string) (issue, bool) {
		return issue{code: code, detail: key + "=" + shorten(v) + " " + why, hint: describe(prm)}, false
	}
	switch prm.Kind {
	case Int:
		n, ok := parseInt(v)
		if !ok {
			return bad(CodeInvalidParameter, "is not an integer")
		}
		if n < prm.Min || n > prm.Max {
			is, _ := bad(CodeValueOutOfRange, "is outside "+strconv.Itoa(prm.Min)+".."+strconv.Itoa(prm.Max))
			if prm.Clamp {
				c := min(max(n, prm.Min), prm.Max)
				is.fix = func(d *draft) { d.pairs[i].Value = strconv.Itoa(c) }
			}
			return is, false
		}
	case Bool:
		switch v {
		case "1", "0", "true", "false":
		default:
			is, _ := bad(CodeInvalidParameter, "is not a boolean")
			if l := strings.ToLower(v); l == "true" || l == "false" {
				is.fix = func(d *draft) { d.pairs[i].Value = l }
			}
			return is, false
		}
	case Enum:
		for _, e := range prm.Values {
			if v == e {
				return issue{}, true
			}
		}
		is, _ := bad(CodeInvalidParameter, "is not one of "+strings.Join(prm.Values, ", "))
		var match []string
		for _, e := range prm.Values {
			if strings.EqualFold(v, e) {
				match = append(match, e)
			}
		}
		if len(match) == 1 {
			is.fix = func(d *draft) { d.pairs[i].Value = Encode(match[0]) }
		}
		return is, false
	case Text:
		if prm.MaxLen > 0 && len(v) > prm.MaxLen {
			return bad(CodeInvalidParameter, "is longer than "+strconv.Itoa(prm.MaxLen)+" bytes")
		}
		if prm.Check != nil {
			if why := prm.Check(v); why != "" {
				return bad(CodeInvalidParameter, why)
			}
		}
	}
	return issue{}, true
}

// checkOccurrences enforces repeat limits and alias consistency for one
// parameter's appearances.
func checkOccurrences(prm *Param, mine []occurrence) (issue, bool) {
	mixed := false
	for _, o := range mine[1:] {
		if o.key != mine[0].key {
			mixed = true
		}
	}
	limit := max(prm.Repeat, 1)
	if mixed {
		is := issue{code: CodeConflictingParams, detail: spellings(mine) + " are the same parameter", hint: "use one spelling: " + prm.Name}
		switch {
		case limit > 1 && len(mine) <= limit:
			is.fix = func(d *draft) {
				for _, o := range mine {
					d.pairs[o.pair].Key = prm.Name
				}
			}
		case allEqual(mine):
			is.fix = func(d *draft) {
				for _, o := range mine[1:] {
					d.pairs[o.pair].drop = true
				}
			}
		}
		return is, false
	}
	if len(mine) <= limit {
		return issue{}, true
	}
	if limit > 1 {
		return issue{code: CodeTooManyValues, detail: mine[0].key + " appears " + strconv.Itoa(len(mine)) + " times; at most " + strconv.Itoa(limit), hint: "split the request into several calls"}, false
	}
	if allEqual(mine) {
		return issue{code: CodeDuplicateParameter, detail: mine[0].key + " appears " + strconv.Itoa(len(mine)) + " times", hint: "give " + mine[0].key + " once",
			fix: func(d *draft) {
				for _, o := range mine[1:] {
					d.pairs[o.pair].drop = true
				}
			}}, false
	}
	return issue{code: CodeConflictingParams, detail: mine[0].key + " is given " + strconv.Itoa(len(mine)) + " different values", hint: "give " + mine[0].key + " once"}, false
}

func allEqual(mine []occurrence) bool {
	for _, o := range mine[1:] {
		if o.val != mine[0].val {
			return false
		}
	}
	return true
}

func spellings(mine []occurrence) string {
	var seen []string
	for _, o := range mine {
		dup := false
		for _, s := range seen {
			dup = dup || s == o.key
		}
		if !dup {
			seen = append(seen, o.key)
		}
	}
	return strings.Join(seen, " and ")
}

// parseInt reads an optional - and decimal digits. A number too large for
// int saturates, so out-of-range checks (and clamping) still apply.
func parseInt(v string) (int, bool) {
	neg := strings.HasPrefix(v, "-")
	d := strings.TrimPrefix(v, "-")
	if d == "" || len(d) > 64 {
		return 0, false
	}
	n := 0
	const limit = 1 << 40 // far beyond any bound a route uses
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < limit {
			n = n*10 + int(c-'0')
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// describe says what a parameter accepts, for hints.
func describe(p *Param) string {
	switch p.Kind {
	case Int:
		return p.Name + " takes an integer from " + strconv.Itoa(p.Min) + " to " + strconv.Itoa(p.Max)
	case Bool:
		return p.Name + " takes 1, 0, true or false"
	case Enum:
		return p.Name + " takes one of " + strings.Join(p.Values, ", ")
	}
	if p.Check != nil || p.MaxLen > 0 {
		return "check the value of " + p.Name
	}
	return ""
}

// shorten keeps details concise when a bad value is long.
func shorten(v string) string {
	const n = 40
	if len(v) <= n {
		return v
	}
	cut := n
	for cut > 0 && v[cut]&0xC0 == 0x80 {
		cut--
	}
	return v[:cut] + "…"
}
