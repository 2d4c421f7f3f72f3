package transport

import (
	"strconv"
	"strings"

	"github.com/hubdev/hub/geturl/fault"
)

// Target is a request-target cut into its path and parameters. Nothing in it
// is decoded yet: binding decodes values, and repair URLs reuse the text the
// agent wrote for everything they do not correct.
type Target struct {
	Path   string // the path as written, e.g. /v0/<tok>/r
	Pairs  []Pair // the parameters before raw=, in order
	HasRaw bool   // whether a raw= parameter starts a raw tail
	Tail   string // everything after the first raw=, as written
}

// Pair is one key=value parameter as written.
type Pair struct {
	Key   string
	Value string
	HasEq bool // false for a bare key with no =
}

// ParseTarget splits a request-target (r.RequestURI) into path, parameters
// and raw tail, enforcing MaxTarget and MaxRaw on the text as written. An
// absolute-form target (http://host/path?…, as a proxy sends it) is reduced
// to its path and query. It never decodes, so it cannot fail on content.
func ParseTarget(target string) (*Target, *Error) {
	if len(target) > MaxTarget {
		return nil, &Error{
			Code:      CodeRequestTooLarge,
			Detail:    "request target is " + strconv.Itoa(len(target)) + " bytes; the limit is " + strconv.Itoa(MaxTarget),
			Hint:      "stage large content with /s in chunks of about 1 KiB and reference it with blob=",
			Retryable: true,
			Action:    fault.ActionStageContent,
		}
	}
	if rest, ok := cutScheme(target); ok {
		switch i := strings.IndexAny(rest, "/?"); {
		case i < 0:
			target = "/"
		case rest[i] == '?':
			target = "/" + rest[i:]
		default:
			target = rest[i:]
		}
	}
	if !strings.HasPrefix(target, "/") {
		return nil, &Error{Code: CodeMalformedRequest, Detail: "request target must start with /", Action: fault.ActionCorrectRequest}
	}
	t := &Target{Path: target}
	q := ""
	if i := strings.IndexByte(target, '?'); i >= 0 {
		t.Path, q = target[:i], target[i+1:]
	}
	head := q
	switch {
	case strings.HasPrefix(q, "raw="):
		head, t.Tail, t.HasRaw = "", q[len("raw="):], true
	default:
		if i := strings.Index(q, "&raw="); i >= 0 {
			head, t.Tail, t.HasRaw = q[:i], q[i+len("&raw="):], true
		}
	}
	if t.HasRaw && len(t.Tail) > MaxRaw {
		return nil, rawTooLarge(len(t.Tail), "as written")
	}
	t.Pairs = splitPairs(head)
	return t, nil
}

func rawTooLarge(n int, how string) *Error {
	return &Error{
		Code:      CodeRawTooLarge,
		Detail:    "raw= content is " + strconv.Itoa(n) + " bytes " + how + "; the limit is " + strconv.Itoa(MaxRaw),
		Hint:      "stage the content with /s in chunks of about 1 KiB and reference it with blob=",
		Retryable: true,
		Action:    fault.ActionStageContent,
	}
}

// splitPairs splits a query (without its raw tail) on &. Empty segments
// (a doubled or trailing &) carry nothing and are skipped.
func splitPairs(q string) []Pair {
	if q == "" {
		return nil
	}
	pairs := make([]Pair, 0, strings.Count(q, "&")+1)
	for q != "" {
		seg := q
		if i := strings.IndexByte(q, '&'); i >= 0 {
			seg, q = q[:i], q[i+1:]
		} else {
			q = ""
		}
		if seg == "" {
			continue
		}
		k, v, eq := strings.Cut(seg, "=")
		pairs = append(pairs, Pair{Key: k, Value: v, HasEq: eq})
	}
	return pairs
}

// Rewrite writes the request again from route on, byte for byte as the
// agent wrote it, except that parameters whose key drop names are left
// out (drop may be nil) and add, when not empty, is appended as one more
// parameter just before the raw tail.
func (t *Target) Rewrite(route string, drop func(key string) bool, add string) string {
	var b strings.Builder
	b.WriteString(route)
	sep := "?"
	for _, p := range t.Pairs {
		if drop != nil && drop(p.Key) {
			continue
		}
		b.WriteString(sep)
		sep = "&"
		b.WriteString(p.Key)
		if p.HasEq {
			b.WriteByte('=')
			b.WriteString(p.Value)
		}
	}
	if add != "" {
		b.WriteString(sep + add)
		sep = "&"
	}
	if t.HasRaw {
		b.WriteString(sep + "raw=" + t.Tail)
	}
	return b.String()
}

// cutScheme strips "http://" or "https://" (any case) and returns the rest.
func cutScheme(s string) (string, bool) {
	for _, p := range []string{"http://", "https://"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return s[len(p):], true
		}
	}
	return s, false
}
