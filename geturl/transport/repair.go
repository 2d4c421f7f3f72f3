package transport

import (
	"strings"

	"github.com/hubdev/hub/geturl/fault"
)

// draft is a request being corrected: the agent's pairs (with the text they
// wrote, so a repair changes only what it must) and the raw tail.
type draft struct {
	pairs  []dpair
	hasRaw bool
	tail   string
}

type dpair struct {
	Pair
	drop bool
}

func newDraft(t *Target) *draft {
	d := &draft{pairs: make([]dpair, len(t.Pairs)), hasRaw: t.HasRaw, tail: t.Tail}
	for i, p := range t.Pairs {
		d.pairs[i] = dpair{Pair: p}
	}
	return d
}

// query renders the draft back into query text, raw tail last.
func (d *draft) query() string {
	var b strings.Builder
	for _, p := range d.pairs {
		if p.drop {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.Key)
		if p.HasEq {
			b.WriteByte('=')
			b.WriteString(p.Value)
		}
	}
	if d.hasRaw {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString("raw=")
		b.WriteString(d.tail)
	}
	return b.String()
}

// maxRepairRounds bounds how many times a corrected request is corrected
// again (a moved wait=5000 still needs clamping, for example).
const maxRepairRounds = 4

// refusal turns binding issues into the agent-facing error, with a repair
// URL when every issue (in every round) has a deterministic correction and
// the corrected request binds cleanly.
func refusal(t *Target, s *Spec, base string, issues []issue) *Error {
	e := &Error{Code: issues[0].code, Retryable: true, Action: fault.ActionCorrectRequest}
	details := make([]string, len(issues))
	for i, is := range issues {
		details[i] = is.detail
	}
	e.Detail = joinDetails(details)
	for _, is := range issues {
		if is.hint != "" {
			e.Hint = is.hint
			break
		}
	}
	if e.Code == CodeRawTooLarge {
		e.Action = fault.ActionStageContent
	}
	if q, ok := repairQuery(t, s, issues); ok {
		e.Repair = base + s.Route
		if q != "" {
			e.Repair += "?" + q
		}
		e.Action = fault.ActionFetchRepair
	}
	return e
}

func repairQuery(t *Target, s *Spec, issues []issue) (string, bool) {
	for range maxRepairRounds {
		d := newDraft(t)
		for _, is := range issues {
			if is.fix == nil {
				return "", false
			}
			is.fix(d)
		}
		q := d.query()
		if len(q)+len(s.Route)+1 > MaxTarget {
			return "", false
		}
		next, err := ParseTarget(s.Route + "?" + q)
		if err != nil {
			return "", false
		}
		_, issues = bindOnce(next, s)
		if len(issues) == 0 {
			return q, true
		}
		t = next
	}
	return "", false
}

// typoCandidate finds the one declared name (or alias) an unknown key is an
// obvious misspelling of: equal ignoring case, or within a small edit
// distance (1 for names of up to 4 letters, 2 beyond) with no tie.
func typoCandidate(s *Spec, key string) (string, bool) {
	if len(key) > 32 {
		return "", false
	}
	lk := strings.ToLower(key)
	best, bestD, tie := "", 99, false
	consider := func(name string) {
		d := distance(lk, strings.ToLower(name))
		switch {
		case d < bestD:
			best, bestD, tie = name, d, false
		case d == bestD && name != best:
			tie = true
		}
	}
	for _, p := range s.Params {
		consider(p.Name)
		for _, a := range p.Aliases {
			consider(a)
		}
	}
	limit := 2
	if len(key) <= 4 {
		limit = 1
	}
	if best == "" || tie || bestD > limit {
		return "", false
	}
	return best, true
}

// distance is the optimal-string-alignment edit distance: insertions,
// deletions, substitutions and adjacent transpositions (wiat → wait is 1).
func distance(a, b string) int {
	if a == b {
		return 0
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
