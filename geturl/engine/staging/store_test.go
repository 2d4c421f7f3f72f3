package staging

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newStore() (*Store, *clock) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return New(c.now), c
}

func put(t *testing.T, s *Store, name string, i, n int, content string) Ack {
	t.Helper()
	a, err := s.Put(name, i, n, content)
	if err != nil {
		t.Fatalf("put %s[%d/%d]: %v", name, i, n, err)
	}
	return a
}

func code(t *testing.T, err interface{ Error() string }, want string) {
	t.Helper()
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestStageOutOfOrderAndAssemble(t *testing.T) {
	s, _ := newStore()
	a := put(t, s, "feature", 2, 3, "c~")
	if a.Complete || !a.Snapshot || fmt.Sprint(a.Received, a.Missing) != "[2] [0 1]" || a.Index != 2 {
		t.Fatalf("%+v", a)
	}
	if _, err := s.Assemble("feature", 0); err == nil || err.Code != CodeBlobIncomplete {
		t.Fatalf("incomplete assembly: %v", err)
	}
	put(t, s, "feature", 0, 3, "a\x00")
	a = put(t, s, "feature", 1, 3, "b\r\n")
	if !a.Complete || a.Snapshot || a.Bytes != 7 {
		t.Fatalf("%+v", a)
	}
	// The identical chunk again is a duplicate, not a change.
	if a := put(t, s, "feature", 1, 3, "b\r\n"); !a.Duplicate || !a.Complete {
		t.Fatalf("%+v", a)
	}
	for _, count := range []int{0, 3} {
		got, err := s.Assemble("feature", count)
		if err != nil || got != "a\x00b\r\nc~" {
			t.Fatalf("count=%d: %q %v", count, got, err)
		}
	}
	// Using a blob keeps it, so a replayed consuming URL finds it again.
	if _, err := s.Assemble("feature", 3); err != nil {
		t.Fatal(err)
	}
}

func TestImmutability(t *testing.T) {
	s, _ := newStore()
	put(t, s, "b", 0, 2, "one")
	_, err := s.Put("b", 0, 2, "other")
	code(t, err, CodeChunkConflict)
	_, err = s.Put("b", 1, 3, "x")
	code(t, err, CodeCountMismatch)
	_, err = s.Put("b", 2, 2, "x")
	code(t, err, CodeIndexOutOfRange)
	_, err = s.Put("c", 0, 65, "x")
	code(t, err, CodeCountMismatch)
	_, err = s.Put("c", -1, 2, "x")
	code(t, err, CodeIndexOutOfRange)
	_, err = s.Put("../x", 0, 1, "x")
	code(t, err, CodeInvalidName)
	_, err = s.Put("c", 0, 1, strings.Repeat("x", MaxChunkBytes+1))
	code(t, err, CodeChunkTooLarge)
	// Nothing refused was stored.
	if n, b := s.Usage(); n != 1 || b != 3 {
		t.Fatalf("%d blobs, %d bytes", n, b)
	}
	put(t, s, "b", 1, 2, "two")
	_, err = s.Assemble("b", 1)
	code(t, err, CodeCountMismatch)
	if !strings.Contains(err.Error(), "extra") {
		t.Fatal(err)
	}
	_, err = s.Assemble("b", 4)
	code(t, err, CodeCountMismatch)
	_, err = s.Assemble("nope", 0)
	code(t, err, CodeBlobNotFound)
}

func TestBlobByteLimit(t *testing.T) {
	s, _ := newStore()
	chunk := strings.Repeat("x", MaxChunkBytes)
	for i := range MaxBlobBytes / MaxChunkBytes {
		put(t, s, "big", i, 64, chunk)
	}
	_, err := s.Put("big", 20, 64, "y")
	code(t, err, CodeBlobTooLarge)
}

func TestStatus(t *testing.T) {
	s, c := newStore()
	put(t, s, "p", 0, 3, strings.Repeat("é", 50)) // 100 bytes
	put(t, s, "p", 2, 3, "tail")
	c.advance(10 * time.Minute)
	st, err := s.Status("p")
	if err != nil {
		t.Fatal(err)
	}
	if st.Complete || fmt.Sprint(st.Received, st.Missing, st.ChunkBytes) != "[0 2] [1] [100 -1 4]" || st.Bytes != 104 || st.Preview != strings.Repeat("é", 50) {
		t.Fatalf("%+v", st)
	}
	put(t, s, "p", 1, 3, strings.Repeat("a", 100))
	st, _ = s.Status("p")
	if len(st.Preview) != PreviewBytes || !strings.HasSuffix(st.Preview, "a") {
		t.Fatalf("preview %q", st.Preview)
	}
	put(t, s, "q", 0, 1, "\xe2\x82\xac\xe2\x82\xac")
	if st, _ := s.Status("q"); st.Preview != "€€" {
		t.Fatalf("%q", st.Preview)
	}
}

// Blobs expire after 30 minutes without use; every use restarts the
// clock.
func TestTTL(t *testing.T) {
	s, c := newStore()
	put(t, s, "a", 0, 1, "x")
	put(t, s, "b", 0, 1, "y")
	c.advance(20 * time.Minute)
	if _, err := s.Status("a"); err != nil {
		t.Fatal(err)
	}
	c.advance(10 * time.Minute)
	if _, err := s.Assemble("a", 1); err != nil {
		t.Fatalf("a was used 10 minutes ago: %v", err)
	}
	if _, err := s.Status("b"); err == nil || err.Code != CodeBlobNotFound {
		t.Fatalf("b idle for 30 minutes: %v", err)
	}
	c.advance(TTL - time.Second)
	if _, err := s.Assemble("a", 1); err != nil {
		t.Fatal(err)
	}
	if n, b := s.Usage(); n != 1 || b != 1 {
		t.Fatalf("%d %d", n, b)
	}
}

// Past 128 blobs or 2 MiB the least recently used blobs other than the one
// being staged go first.
func TestEvictionOldestUnrelated(t *testing.T) {
	s, c := newStore()
	for i := range MaxBlobs {
		put(t, s, fmt.Sprintf("b%03d", i), 0, 2, "x")
		c.advance(time.Second)
	}
	s.Status("b000") // used again: now the newest
	put(t, s, "new", 0, 1, "y")
	if _, err := s.Status("b001"); err == nil {
		t.Fatal("the least recently used blob survived the 129th")
	}
	if _, err := s.Status("b000"); err != nil {
		t.Fatal("a recently used blob was evicted")
	}

	s, c = newStore()
	chunk := strings.Repeat("z", MaxChunkBytes)
	// 13 blobs of 160 KiB = 2080 KiB > 2 MiB: the first ones go.
	for b := range 13 {
		for i := range 20 {
			put(t, s, fmt.Sprintf("f%02d", b), i, 20, chunk)
			c.advance(time.Millisecond)
		}
	}
	if _, bytes := s.Usage(); bytes > MaxSessionBytes {
		t.Fatalf("%d bytes staged", bytes)
	}
	if _, err := s.Status("f00"); err == nil {
		t.Fatal("the oldest blob survived")
	}
	if got, err := s.Assemble("f12", 20); err != nil || len(got) != MaxBlobBytes {
		t.Fatalf("the blob being staged was hurt: %v", err)
	}
}

func TestConcurrentChunks(t *testing.T) {
	s, _ := newStore()
	var wg sync.WaitGroup
	for i := range 64 {
		for range 3 { // each chunk sent three times at once
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Put("c", i, 64, fmt.Sprintf("<%02d>", i)); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	got, err := s.Assemble("c", 64)
	if err != nil || len(got) != 64*4 || !strings.HasPrefix(got, "<00><01>") || !strings.HasSuffix(got, "<63>") {
		t.Fatalf("%q %v", got, err)
	}
}
