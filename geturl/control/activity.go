package control

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// maxActivity bounds the recent-activity list the control page shows.
const maxActivity = 200

// Bounds on the changed paths one activity entry shows.
const (
	maxChangedPaths = 8   // more are counted in MorePaths
	maxPathDisplay  = 160 // bytes of one path, cut with "…"
)

// Entry is one authenticated agent request, as the operator sees
// it: which tool, how it went, how long it took, whether it was a replay —
// never its content, its query values or its token.
type Entry struct {
	At         time.Time `json:"at"`
	Session    string    `json:"session,omitempty"`
	Capability string    `json:"capability"`
	Route      string    `json:"route"`
	Tool       string    `json:"tool,omitempty"`
	Status     int       `json:"status"`
	ErrorCode  string    `json:"errorCode,omitempty"`
	DurationMS float64   `json:"durationMs"`
	Bytes      int       `json:"bytes"`
	// Call is a journaled request's call id (a digest of the operation,
	// not its content); Replayed says it found the intent already there
	// and ran nothing.
	Call     string `json:"call,omitempty"`
	Replayed bool   `json:"replayed,omitempty"`
	// Paths are the files a file mutation changed, relative to the
	// project (at most maxChangedPaths, each shown safely: see
	// displayPath), and MorePaths how many more it changed. They appear
	// once the mutation has succeeded, on the request that started it,
	// even when it finished after that request answered.
	Paths     []string `json:"paths,omitempty"`
	MorePaths int      `json:"morePaths,omitempty"`
}

// startedChange reports whether e is the request that starts an intent
// (not a replay of it, not a poll of it): the entry a change shows on.
func (e *Entry) startedChange() bool {
	return e.Call != "" && !e.Replayed && e.Route != "/j"
}

// changeKey names an intent: call ids are per session generation.
type changeKey struct{ session, call string }

type changedPaths struct {
	paths []string
	more  int
}

// Activity is a ring of the most recent entries.
type Activity struct {
	mu   sync.Mutex
	ring []Entry
	next int
	full bool
	// pending holds changes whose request is still running (its entry is
	// added when it answers); order is its keys, oldest first, to bound
	// it.
	pending map[changeKey]changedPaths
	order   []changeKey
}

func NewActivity() *Activity {
	return &Activity{ring: make([]Entry, maxActivity), pending: make(map[changeKey]changedPaths)}
}

func (l *Activity) Add(e Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.startedChange() {
		k := changeKey{e.Session, e.Call}
		if c, ok := l.pending[k]; ok {
			e.Paths, e.MorePaths = c.paths, c.more
			delete(l.pending, k)
		}
	}
	l.ring[l.next] = e
	l.next = (l.next + 1) % len(l.ring)
	l.full = l.full || l.next == 0
}

// changed records what the intent call of session changed: on its
// request's entry when that is in the list already (the intent outlived
// its request's wait), otherwise for the entry to come.
func (l *Activity) Changed(session, call string, paths []string) {
	c := changedPaths{more: max(0, len(paths)-maxChangedPaths)}
	for _, p := range paths[:min(len(paths), maxChangedPaths)] {
		c.paths = append(c.paths, displayPath(p))
	}
	k := changeKey{session, call}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.ring {
		if e := &l.ring[i]; e.startedChange() && e.Session == session && e.Call == call {
			e.Paths, e.MorePaths = c.paths, c.more
			return
		}
	}
	l.pending[k] = c
	l.order = append(l.order, k)
	for len(l.order) > maxActivity {
		delete(l.pending, l.order[0])
		l.order = l.order[1:]
	}
}

// recent returns the entries, newest first.
func (l *Activity) Recent() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.next
	if l.full {
		n = len(l.ring)
	}
	out := make([]Entry, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, l.ring[(l.next-i+len(l.ring))%len(l.ring)])
	}
	return out
}

// displayPath makes a path the agent chose safe to show the operator as
// text: every rune that is not plainly visible — control characters, a
// newline, bidirectional overrides that would show the name reversed,
// zero-width characters, invalid UTF-8 — is shown as an escape (\u202e),
// a backslash is doubled so no escape can be forged, and the result is cut
// at maxPathDisplay bytes with "…".
func displayPath(p string) string {
	var b strings.Builder
	for i, r := range p {
		if b.Len() >= maxPathDisplay {
			b.WriteString("…")
			break
		}
		switch {
		case r == utf8.RuneError && isInvalid(p[i:]):
			fmt.Fprintf(&b, `\x%02x`, p[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == ' ' || (unicode.IsGraphic(r) && !unicode.IsSpace(r)):
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// isInvalid reports whether s starts with an invalid UTF-8 byte (rather
// than an encoded U+FFFD).
func isInvalid(s string) bool {
	_, size := utf8.DecodeRuneInString(s)
	return size <= 1
}
