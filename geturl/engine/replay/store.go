package replay

import (
	"crypto/rand"
	"errors"
	"sync"
	"time"
)

// The spec's bounds on one session's store.
const (
	MaxEntries = 96
	MaxBytes   = 2 << 20
	TTL        = 15 * time.Minute
)

// Errors returned by Last, Part and Range.
var (
	ErrNotFound   = errors.New("response not found or expired")
	ErrPartRange  = errors.New("part number out of range")
	ErrBadRange   = errors.New("offset or length out of range")
	ErrNoResponse = errors.New("no response stored yet")
	// ErrAbove: the response was produced on a stronger capability than
	// the one reading it back.
	ErrAbove = errors.New("response produced on a stronger capability")
)

// Level is the capability a response was produced on. A response is read
// back only at its own level or a stronger one: what the mutation base
// answered (recovery URLs naming it, command output) never comes back
// through the read base.
type Level uint8

// The levels, weakest first.
const (
	ReadLevel Level = iota
	MutationLevel
)

// Store holds the recent responses of one session. It is safe for
// concurrent use.
//
// Entries sit on one list ordered by last use (Put or a read), least
// recent first. Expiry therefore looks only at the front until it finds a
// live entry, and the bounds evict from the front too: a response the agent
// is still paging through outlives newer ones it never came back to.
type Store struct {
	now func() time.Time

	mu      sync.Mutex
	entries map[string]*entry
	lru     entry // sentinel: lru.next is the least recently used
	bytes   int
	last    string
}

type entry struct {
	id         string
	level      Level
	body       []byte // read only under mu: a later Put may reuse it once dropped
	touched    time.Time
	prev, next *entry
}

// New returns an empty store reading time from now (time.Now when nil).
// The clock must not go backwards (time.Now's monotonic reading does not):
// the list's order is its order of touches.
func New(now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	s := &Store{now: now, entries: make(map[string]*entry)}
	s.lru.prev, s.lru.next = &s.lru, &s.lru
	return s
}

// Put stores a copy of body, produced at level, makes it the last response
// and returns its id.
// The least recently used responses are evicted to stay within MaxEntries
// and MaxBytes. A body larger than MaxBytes on its own is not stored and Put
// returns "".
//
// Once the store is full every Put evicts, and the copy goes into the
// evicted response's memory when it fits: a busy session then stores its
// answers without allocating. Part and Range copy their chunk out under
// the lock, so nothing outside the store ever holds a stored body.
func (s *Store) Put(level Level, body []byte) string {
	if len(body) > MaxBytes {
		return ""
	}
	id := newID()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var spare *entry
	keep := func(e *entry) { // the freed entry whose memory fits body best
		if fits(cap(e.body), len(body)) && (spare == nil || cap(e.body) < cap(spare.body)) {
			spare = e
		}
	}
	s.expireWith(now, keep)
	for len(s.entries) >= MaxEntries || (len(s.entries) > 0 && s.bytes+len(body) > MaxBytes) {
		e := s.lru.next
		s.drop(e)
		keep(e)
	}
	e := spare
	if e == nil {
		e = &entry{}
	}
	*e = entry{id: id, level: level, body: append(e.body[:0], body...), touched: now}
	s.entries[id] = e
	s.pushBack(e)
	s.bytes += len(body)
	s.last = id
	return id
}

// fits reports whether a freed body of capacity c may hold n bytes: enough
// room, and not so much that a small answer pins a large buffer.
func fits(c, n int) bool { return c >= n && c <= 2*n+4096 }

// Last returns the id of the most recent Put that is still stored:
// ErrNoResponse when there is none, ErrAbove when it was produced above
// level at (the last response is never skipped for an older one: a reader
// would take it for the answer it lost).
func (s *Store) Last(at Level) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(s.now())
	e, ok := s.entries[s.last]
	switch {
	case !ok:
		return "", ErrNoResponse
	case e.level > at:
		return "", ErrAbove
	}
	return s.last, nil
}

// Len reports how many responses and bytes are stored.
func (s *Store) Len() (entries, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(s.now())
	return len(s.entries), s.bytes
}

// read calls fn with a live entry's body, under the lock (the body may be
// reused by a later Put once the lock is released), and refreshes the
// entry's inactivity timer. An entry above level at is ErrAbove, and not
// touched.
func (s *Store) read(id string, at Level, fn func(body []byte)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	e, ok := s.entries[id]
	if !ok {
		return ErrNotFound
	}
	if e.level > at {
		return ErrAbove
	}
	e.touched = now
	s.unlink(e)
	s.pushBack(e)
	fn(e.body)
	return nil
}

// expire drops every entry untouched for longer than TTL: a prefix of the
// list, so it stops at the first live one.
func (s *Store) expire(now time.Time) { s.expireWith(now, nil) }

// expireWith is expire, handing each dropped entry to freed (when set).
func (s *Store) expireWith(now time.Time, freed func(*entry)) {
	for e := s.lru.next; e != &s.lru && now.Sub(e.touched) > TTL; e = s.lru.next {
		s.drop(e)
		if freed != nil {
			freed(e)
		}
	}
}

func (s *Store) drop(e *entry) {
	delete(s.entries, e.id)
	s.unlink(e)
	s.bytes -= len(e.body)
}

func (s *Store) pushBack(e *entry) {
	e.prev, e.next = s.lru.prev, &s.lru
	s.lru.prev.next = e
	s.lru.prev = e
}

func (s *Store) unlink(e *entry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

// newID is random rather than a counter so an id from an earlier session
// generation can never name a different response of a later one.
func newID() string {
	const hexDigits = "0123456789abcdef"
	var r [6]byte
	rand.Read(r[:])
	b := [13]byte{'z'}
	for i, c := range r {
		b[1+2*i], b[2+2*i] = hexDigits[c>>4], hexDigits[c&15]
	}
	return string(b[:])
}
