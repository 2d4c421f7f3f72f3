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

// Errors returned by Part and Range.
var (
	ErrNotFound   = errors.New("response not found or expired")
	ErrPartRange  = errors.New("part number out of range")
	ErrBadRange   = errors.New("offset or length out of range")
	ErrNoResponse = errors.New("no response stored yet")
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
	body       []byte // never modified after Put
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

// Put stores a copy of body, makes it the last response and returns its id.
// The least recently used responses are evicted to stay within MaxEntries
// and MaxBytes. A body larger than MaxBytes on its own is not stored and Put
// returns "".
func (s *Store) Put(body []byte) string {
	if len(body) > MaxBytes {
		return ""
	}
	e := &entry{id: newID(), body: append([]byte(nil), body...)}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	for len(s.entries) >= MaxEntries || (len(s.entries) > 0 && s.bytes+len(body) > MaxBytes) {
		s.drop(s.lru.next)
	}
	e.touched = now
	s.entries[e.id] = e
	s.pushBack(e)
	s.bytes += len(body)
	s.last = e.id
	return e.id
}

// Last returns the id of the most recent Put that is still stored.
func (s *Store) Last() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(s.now())
	if _, ok := s.entries[s.last]; !ok {
		return "", false
	}
	return s.last, true
}

// Len reports how many responses and bytes are stored.
func (s *Store) Len() (entries, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(s.now())
	return len(s.entries), s.bytes
}

// get returns a live entry's body and refreshes its inactivity timer. The
// body is never modified after Put, so callers may slice it after unlocking.
func (s *Store) get(id string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	e, ok := s.entries[id]
	if !ok {
		return nil, ErrNotFound
	}
	e.touched = now
	s.unlink(e)
	s.pushBack(e)
	return e.body, nil
}

// expire drops every entry untouched for longer than TTL: a prefix of the
// list, so it stops at the first live one.
func (s *Store) expire(now time.Time) {
	for e := s.lru.next; e != &s.lru && now.Sub(e.touched) > TTL; e = s.lru.next {
		s.drop(e)
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
