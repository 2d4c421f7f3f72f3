package staging

import (
	"bytes"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hubdev/hub/geturl/fault"
)

// Store is one session generation's staged blobs. It is safe for
// concurrent use; chunks of one blob may arrive in any order and
// concurrently.
type Store struct {
	now func() time.Time

	mu    sync.Mutex
	blobs map[string]*blob
	bytes int
}

type blob struct {
	name    string
	count   int
	chunks  [][]byte // len count; nil for an index not received yet
	bytes   int
	touched time.Time
}

// New returns an empty store on the given clock (time.Now when nil).
func New(now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{now: now, blobs: map[string]*blob{}}
}

// Ack acknowledges one chunk. Unless Complete it is a snapshot: chunks
// sent concurrently may land in any order, and the blob's status (or a
// complete acknowledgement) is authoritative.
type Ack struct {
	Blob      string `json:"blob"`
	Index     int    `json:"index"`
	Count     int    `json:"count"`
	Duplicate bool   `json:"duplicate"`
	Received  []int  `json:"received"`
	Missing   []int  `json:"missing"`
	Complete  bool   `json:"complete"`
	Snapshot  bool   `json:"snapshot"`
	Bytes     int    `json:"bytes"`
}

// Status describes a blob for /b.
type Status struct {
	Blob       string `json:"blob"`
	Count      int    `json:"count"`
	Received   []int  `json:"received"`
	Missing    []int  `json:"missing"`
	Complete   bool   `json:"complete"`
	Bytes      int    `json:"bytes"`
	ChunkBytes []int  `json:"chunkBytes"` // -1 for a missing index
	// Preview is the start of the content received from index 0 on, cut
	// on a UTF-8 boundary.
	Preview string `json:"preview"`
	// ExpiresIn is the inactivity time left, in seconds.
	ExpiresIn int `json:"expiresInSeconds"`
}

// Put stages chunk index of blob name, declaring count chunks in all.
func (s *Store) Put(name string, index, count int, content string) (Ack, *fault.Error) {
	if !NameRE().MatchString(name) {
		return Ack{}, refuse(CodeInvalidName, "", "blob name %q: %s", shorten(name), CheckName(name))
	}
	switch {
	case count < 1 || count > MaxChunks:
		return Ack{}, refuse(CodeCountMismatch, "a blob has 1 to "+strconv.Itoa(MaxChunks)+" chunks; stage larger content as several blobs", "count=%d is outside 1..%d", count, MaxChunks)
	case index < 0 || index >= count:
		return Ack{}, refuse(CodeIndexOutOfRange, "chunk indexes run from 0 to count-1", "i=%d is outside 0..%d", index, count-1)
	case len(content) > MaxChunkBytes:
		return Ack{}, refuse(CodeChunkTooLarge, "send chunks of about 1 KiB", "chunk is %d bytes; the limit is %d", len(content), MaxChunkBytes)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expireLocked(now)
	b := s.blobs[name]
	if b != nil {
		switch {
		case count != b.count:
			return Ack{}, refuse(CodeCountMismatch, "a blob's count is fixed by its first chunk; use a new blob name for other content",
				"blob %s was declared with count=%d, not %d", name, b.count, count)
		case b.chunks[index] != nil:
			if !bytes.Equal(b.chunks[index], []byte(content)) {
				return Ack{}, refuse(CodeChunkConflict, "chunks are immutable: resend the original content, or stage the new content under a new blob name",
					"blob %s chunk %d was already staged with other content", name, index)
			}
			b.touched = now
			return b.ack(index, true), nil
		case b.bytes+len(content) > MaxBlobBytes:
			return Ack{}, refuse(CodeBlobTooLarge, "split the content over several blobs (and several mutations)",
				"blob %s would be %d bytes; the limit is %d", name, b.bytes+len(content), MaxBlobBytes)
		}
	} else if len(s.blobs) >= MaxBlobs {
		s.evictOldestLocked(name)
	}
	for s.bytes+len(content) > MaxSessionBytes && s.evictOldestLocked(name) {
	}
	if b == nil {
		b = &blob{name: name, count: count, chunks: make([][]byte, count)}
		s.blobs[name] = b
	}
	b.chunks[index] = []byte(content)
	b.bytes += len(content)
	s.bytes += len(content)
	b.touched = now
	return b.ack(index, false), nil
}

func (b *blob) ack(index int, dup bool) Ack {
	recv, miss := b.indexes()
	return Ack{Blob: b.name, Index: index, Count: b.count, Duplicate: dup, Received: recv, Missing: miss,
		Complete: len(miss) == 0, Snapshot: len(miss) > 0, Bytes: b.bytes}
}

func (b *blob) indexes() (recv, miss []int) {
	recv, miss = []int{}, []int{}
	for i, c := range b.chunks {
		if c != nil {
			recv = append(recv, i)
		} else {
			miss = append(miss, i)
		}
	}
	return recv, miss
}

// Status reports a blob's chunks.
func (s *Store) Status(name string) (Status, *fault.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	b, terr := s.getLocked(name, now)
	if terr != nil {
		return Status{}, terr
	}
	recv, miss := b.indexes()
	st := Status{Blob: name, Count: b.count, Received: recv, Missing: miss, Complete: len(miss) == 0, Bytes: b.bytes,
		ChunkBytes: make([]int, b.count), ExpiresIn: int(TTL / time.Second)}
	var pre []byte
	prefix := true // every chunk so far was received
	for i, c := range b.chunks {
		st.ChunkBytes[i] = len(c)
		if c == nil {
			st.ChunkBytes[i], prefix = -1, false
		}
		if prefix && len(pre) < PreviewBytes {
			pre = append(pre, c[:min(len(c), PreviewBytes+utf8.UTFMax)]...)
		}
	}
	st.Preview = cutUTF8(pre, PreviewBytes)
	return st, nil
}

// Assemble returns the content of a complete blob. count, when given
// (> 0), must equal the declared count: fewer would leave chunks over,
// more would expect chunks that cannot exist. Using a blob does not
// remove it: a replay of the consuming URL must find the same content, so
// the journal recognises it as the same intent.
func (s *Store) Assemble(name string, count int) (string, *fault.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	b, terr := s.getLocked(name, now)
	if terr != nil {
		return "", terr
	}
	if count > 0 && count != b.count {
		what := "chunks " + strconv.Itoa(count) + ".." + strconv.Itoa(b.count-1) + " would be extra"
		if count > b.count {
			what = "it cannot have chunks " + strconv.Itoa(b.count) + ".." + strconv.Itoa(count-1)
		}
		return "", refuse(CodeCountMismatch, "give the count the blob was staged with, or leave count out",
			"blob %s was staged with count=%d, not %d: %s", name, b.count, count, what)
	}
	_, miss := b.indexes()
	if len(miss) > 0 {
		e := refuse(CodeBlobIncomplete, "stage the missing chunks with /s, then fetch this URL again",
			"blob %s is missing %d of %d chunks", name, len(miss), b.count)
		e.Action = fault.ActionStageContent
		return "", e.With("missing", miss)
	}
	out := make([]byte, 0, b.bytes)
	for _, c := range b.chunks {
		out = append(out, c...)
	}
	return string(out), nil
}

func (s *Store) getLocked(name string, now time.Time) (*blob, *fault.Error) {
	s.expireLocked(now)
	b := s.blobs[name]
	if b == nil {
		return nil, refuse(CodeBlobNotFound, "staged blobs live 30 minutes after their last use, in memory, for this session generation; stage it again (an identical mutation replayed afterwards is still recognised)",
			"no staged blob %s", shorten(name))
	}
	b.touched = now
	return b, nil
}

// expireLocked drops blobs idle for TTL.
func (s *Store) expireLocked(now time.Time) {
	for name, b := range s.blobs {
		if now.Sub(b.touched) >= TTL {
			s.dropLocked(name, b)
		}
	}
}

// evictOldestLocked drops the least recently used blob other than keep
// and reports whether there was one.
func (s *Store) evictOldestLocked(keep string) bool {
	var oldest *blob
	for name, b := range s.blobs {
		if name != keep && (oldest == nil || b.touched.Before(oldest.touched) || b.touched.Equal(oldest.touched) && name < oldest.name) {
			oldest = b
		}
	}
	if oldest == nil {
		return false
	}
	s.dropLocked(oldest.name, oldest)
	return true
}

func (s *Store) dropLocked(name string, b *blob) {
	delete(s.blobs, name)
	s.bytes -= b.bytes
}

// Usage reports the blobs and bytes held.
func (s *Store) Usage() (blobs, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.blobs), s.bytes
}

func cutUTF8(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n])
}

func shorten(s string) string {
	if len(s) > 64 {
		return cutUTF8([]byte(s), 64) + "…"
	}
	return s
}
