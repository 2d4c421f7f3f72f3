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

// Fits reports whether an exact URL (scheme://host/path?query, or a bare
// request-target) is one the transport accepts: its request-target within
// MaxTarget and its raw tail within MaxRaw as written. Encode can make a
// value longer than the agent wrote it (a [ becomes %5B), so a recovery URL
// built from agent text must be checked before it is offered: one the
// transport refuses is no recovery.
func Fits(u string) bool {
	target := u
	if _, rest, ok := strings.Cut(u, "://"); ok {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return false
		}
		target = rest[i:]
	}
	_, err := ParseTarget(target)
	return err == nil
}
