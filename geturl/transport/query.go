package transport

import "strings"

// Query is an ordered parameter list with an optional raw tail, for building
// the exact URLs handed back to agents (next, repair, retry, poll, repeat).
// Values are encoded with Encode, so they decode to exactly what was added;
// the raw tail is always written last.
type Query struct {
	pairs  []Pair
	raw    string
	hasRaw bool
}

// Add appends name=value.
func (q *Query) Add(name, value string) *Query {
	q.pairs = append(q.pairs, Pair{Key: name, Value: value, HasEq: true})
	return q
}

// SetRaw sets the raw tail's content.
func (q *Query) SetRaw(content string) *Query {
	q.raw, q.hasRaw = content, true
	return q
}

// String renders the query (without the leading ?).
func (q *Query) String() string {
	var b strings.Builder
	for _, p := range q.pairs {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.Key)
		b.WriteByte('=')
		encodeTo(&b, p.Value)
	}
	if q.hasRaw {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString("raw=")
		encodeTo(&b, q.raw)
	}
	return b.String()
}

// URL joins an exact base (https://host/v0/<tok>), a route (/r) and q.
func URL(base, route string, q *Query) string {
	s := base + route
	if q != nil {
		if qs := q.String(); qs != "" {
			s += "?" + qs
		}
	}
	return s
}
