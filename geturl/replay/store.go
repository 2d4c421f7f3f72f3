package replay

import (
	"crypto/rand"
	"encoding/hex"
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
type Store struct {
	now func() time.Time

	mu      sync.Mutex
	entries map[string]*entry
	order   []string // oldest first
	bytes   int
	last    string
}

type entry struct {
	body    []byte
	starts  []int // part i is body[starts[i]:starts[i+1]] (last part ends at len)
	touched time.Time
}

// New returns an empty store reading time from now (time.Now when nil).
func New(now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{now: now, entries: make(map[string]*entry)}
}

// Put stores a copy of body, makes it the last response and returns its id.
// Older responses are evicted to stay within MaxEntries and MaxBytes. A body
// larger than MaxBytes on its own is not stored and Put returns "".
func (s *Store) Put(body []byte) string {
	if len(body) > MaxBytes {
		return ""
	}
	id := newID()
	e := &entry{body: append([]byte(nil), body...), starts: cutParts(body)}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	for len(s.order) >= MaxEntries || (len(s.order) > 0 && s.bytes+len(body) > MaxBytes) {
		s.drop(s.order[0])
	}
	e.touched = now
	s.entries[id] = e
	s.order = append(s.order, id)
	s.bytes += len(body)
	s.last = id
	return id
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
	return len(s.order), s.bytes
}

// get returns a live entry and refreshes its inactivity timer. The body is
// never modified after Put, so callers may slice it after unlocking.
func (s *Store) get(id string) (*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	e, ok := s.entries[id]
	if !ok {
		return nil, ErrNotFound
	}
	e.touched = now
	return e, nil
}

// expire drops every entry untouched for longer than TTL.
func (s *Store) expire(now time.Time) {
	for i := 0; i < len(s.order); {
		id := s.order[i]
		if now.Sub(s.entries[id].touched) > TTL {
			s.drop(id)
			continue
		}
		i++
	}
}

func (s *Store) drop(id string) {
	e := s.entries[id]
	delete(s.entries, id)
	s.bytes -= len(e.body)
	for i, o := range s.order {
		if o == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// newID is random rather than a counter so an id from an earlier session
// generation can never name a different response of a later one.
func newID() string {
	var b [6]byte
	rand.Read(b[:])
	return "z" + hex.EncodeToString(b[:])
}
