package replay

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// clock is an injected, manually advanced time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

// randomUTF8 builds a body of n runes mixing 1- to 4-byte sequences.
func randomUTF8(r *rand.Rand, n int) []byte {
	runes := []rune{'a', '{', '"', '\n', 'é', 'ß', '€', '字', '😀', '𝄞'}
	var b bytes.Buffer
	for range n {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.Bytes()
}

// straddling returns a body with a 4-byte rune across every part cut.
func straddling() []byte {
	var b []byte
	for len(b) < 5*PartSize {
		b = append(b, bytes.Repeat([]byte("x"), PartSize-2-len(b)%PartSize)...)
		b = append(b, "😀"...)
	}
	return b
}

func collectParts(t *testing.T, s *Store, id string) []byte {
	t.Helper()
	var out []byte
	for n := 0; ; n++ {
		r, err := s.Part(id, n, ReadLevel)
		if err != nil {
			t.Fatalf("part %d: %v", n, err)
		}
		if len(r.Chunk) > PartSize {
			t.Fatalf("part %d is %d bytes", n, len(r.Chunk))
		}
		if r.Offset != len(out) || *r.Part != n {
			t.Fatalf("part %d: offset %d after %d bytes", n, r.Offset, len(out))
		}
		out = append(out, r.Chunk...)
		if !r.HasMore {
			if r.Parts != n+1 {
				t.Fatalf("parts = %d, ended at %d", r.Parts, n)
			}
			return out
		}
		if r.NextPart != n+1 {
			t.Fatalf("next part %d", r.NextPart)
		}
	}
}

func TestPartsReconstruct(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	bodies := [][]byte{nil, []byte("x"), bytes.Repeat([]byte("a"), PartSize), bytes.Repeat([]byte("a"), PartSize+1), straddling()}
	for range 50 {
		bodies = append(bodies, randomUTF8(r, r.IntN(6*PartSize)))
	}
	s := New(newClock().now)
	for i, body := range bodies {
		id := s.Put(ReadLevel, body)
		got := collectParts(t, s, id)
		if !bytes.Equal(got, body) {
			t.Fatalf("body %d: reconstruction differs", i)
		}
		for n := 0; ; n++ {
			p, _ := s.Part(id, n, ReadLevel)
			if !utf8.Valid(p.Chunk) {
				t.Fatalf("body %d part %d splits a rune", i, n)
			}
			if !p.HasMore {
				break
			}
		}
	}
}

func TestRangeReconstruct(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := New(newClock().now)
	for i := range 40 {
		body := randomUTF8(r, 1+r.IntN(3*PartSize))
		if i == 0 {
			body = straddling()
		}
		id := s.Put(ReadLevel, body)
		length := 1 + r.IntN(3000)
		var out []byte
		for off := 0; ; {
			rg, err := s.Range(id, off, length, ReadLevel)
			if err != nil {
				t.Fatalf("range %d+%d: %v", off, length, err)
			}
			if rg.Offset != off || !utf8.Valid(rg.Chunk) || len(rg.Chunk) == 0 {
				t.Fatalf("range %d+%d: offset %d, %q", off, length, rg.Offset, rg.Chunk)
			}
			out = append(out, rg.Chunk...)
			if !rg.HasMore {
				break
			}
			off = rg.NextOffset
		}
		if !bytes.Equal(out, body) {
			t.Fatalf("body %d: reconstruction differs", i)
		}
	}
}

func TestRangeCorrection(t *testing.T) {
	body := []byte("a😀b€c") // a=0, 😀=1..4, b=5, €=6..8, c=9
	s := New(newClock().now)
	id := s.Put(ReadLevel, body)
	cases := []struct {
		off, n     int
		start, end int
		more       bool
	}{
		{0, 1, 0, 1, true},
		{0, 3, 0, 1, true}, // end inside 😀 moves back
		{1, 1, 1, 5, true}, // too short for 😀: moves forward
		{2, 1, 1, 5, true}, // start inside 😀 moves back
		{3, 4, 1, 5, true}, // start back to 1, end 5
		{4, 100, 1, 10, false},
		{7, 2, 6, 9, true}, // start back to €; end 8 is inside it and backing off leaves nothing: forward to 9
		{9, 1, 9, 10, false},
	}
	for _, tc := range cases {
		r, err := s.Range(id, tc.off, tc.n, ReadLevel)
		if err != nil {
			t.Fatalf("%d+%d: %v", tc.off, tc.n, err)
		}
		if r.Offset != tc.start || r.Offset+r.Length != tc.end || r.HasMore != tc.more {
			t.Errorf("%d+%d: got [%d,%d) more=%v, want [%d,%d) more=%v", tc.off, tc.n,
				r.Offset, r.Offset+r.Length, r.HasMore, tc.start, tc.end, tc.more)
		}
		if !bytes.Equal(r.Chunk, body[r.Offset:r.Offset+r.Length]) {
			t.Errorf("%d+%d: chunk %q", tc.off, tc.n, r.Chunk)
		}
	}
	for _, bad := range [][2]int{{-1, 1}, {0, 0}, {0, -5}, {10, 1}, {11, 1}, {0, MaxRangeLength + 1}} {
		if _, err := s.Range(id, bad[0], bad[1], ReadLevel); !errors.Is(err, ErrBadRange) {
			t.Errorf("Range(%d, %d): err = %v", bad[0], bad[1], err)
		}
	}
	empty := s.Put(ReadLevel, nil)
	if r, err := s.Range(empty, 0, 10, ReadLevel); err != nil || r.Length != 0 || r.HasMore {
		t.Errorf("empty body: %+v, %v", r, err)
	}
	if _, err := s.Part(id, 1, ReadLevel); !errors.Is(err, ErrPartRange) {
		t.Errorf("part past the end: %v", err)
	}
	if _, err := s.Part(id, -1, ReadLevel); !errors.Is(err, ErrPartRange) {
		t.Errorf("negative part: %v", err)
	}
	if _, err := s.Part("zzz", 0, ReadLevel); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
}

func TestLastPointer(t *testing.T) {
	s := New(newClock().now)
	if _, err := s.Last(ReadLevel); !errors.Is(err, ErrNoResponse) {
		t.Fatal("empty store has a last response")
	}
	a := s.Put(ReadLevel, []byte("first"))
	b := s.Put(ReadLevel, []byte("second"))
	if l, _ := s.Last(ReadLevel); l != b {
		t.Fatalf("last = %q, want %q", l, b)
	}
	// Range reads of an older response do not move the pointer.
	if _, err := s.Part(a, 0, ReadLevel); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Range(a, 0, 3, ReadLevel); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.Last(ReadLevel); l != b {
		t.Fatalf("last moved to %q", l)
	}
}

// TestLevels: a response is read back at its own level or above, never
// below; the last pointer is not moved back to an older response a weaker
// reader may see, and a refused read does not refresh the entry.
func TestLevels(t *testing.T) {
	c := newClock()
	s := New(c.now)
	r := s.Put(ReadLevel, []byte("read answer"))
	m := s.Put(MutationLevel, []byte("mutation answer"))
	if l, err := s.Last(MutationLevel); err != nil || l != m {
		t.Fatalf("last at mutation level = %q %v, want the mutation answer", l, err)
	}
	if l, err := s.Last(ReadLevel); !errors.Is(err, ErrAbove) || l != "" {
		t.Fatalf("last at read level = %q %v, want ErrAbove", l, err)
	}
	if _, err := s.Part(m, 0, ReadLevel); !errors.Is(err, ErrAbove) {
		t.Fatalf("part of a mutation answer at read level: %v", err)
	}
	if _, err := s.Range(m, 0, 3, ReadLevel); !errors.Is(err, ErrAbove) {
		t.Fatalf("range of a mutation answer at read level: %v", err)
	}
	for _, at := range []Level{ReadLevel, MutationLevel} {
		if p, err := s.Part(r, 0, at); err != nil || string(p.Chunk) != "read answer" {
			t.Fatalf("read answer at level %d: %q %v", at, p.Chunk, err)
		}
	}
	if p, err := s.Part(m, 0, MutationLevel); err != nil || string(p.Chunk) != "mutation answer" {
		t.Fatalf("mutation answer at its level: %q %v", p.Chunk, err)
	}
	// Reads refused at the read level keep the mutation answer's timer.
	c.add(TTL - time.Second)
	s.Part(m, 0, ReadLevel)
	c.add(2 * time.Second)
	if _, err := s.Part(m, 0, MutationLevel); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a refused read refreshed the entry: %v", err)
	}
	if l := s.Put(ReadLevel, []byte("again")); func() string { v, _ := s.Last(ReadLevel); return v }() != l {
		t.Fatal("a read answer after a mutation answer is not the last at read level")
	}
}

func TestEviction(t *testing.T) {
	s := New(newClock().now)
	ids := make([]string, 0, MaxEntries+1)
	for range MaxEntries + 1 {
		ids = append(ids, s.Put(ReadLevel, []byte("x")))
	}
	if _, err := s.Part(ids[0], 0, ReadLevel); !errors.Is(err, ErrNotFound) {
		t.Fatalf("oldest survived a 97th put: %v", err)
	}
	if n, _ := s.Len(); n != MaxEntries {
		t.Fatalf("entries = %d", n)
	}
	big := bytes.Repeat([]byte("b"), 900<<10)
	x := s.Put(ReadLevel, big)
	y := s.Put(ReadLevel, big)
	z := s.Put(ReadLevel, big) // 3 × 900 KiB > 2 MiB: x goes
	if _, err := s.Part(x, 0, ReadLevel); !errors.Is(err, ErrNotFound) {
		t.Fatal("byte bound not enforced")
	}
	for _, id := range []string{y, z} {
		if _, err := s.Part(id, 0, ReadLevel); err != nil {
			t.Fatal(err)
		}
	}
	if _, b := s.Len(); b > MaxBytes {
		t.Fatalf("bytes = %d", b)
	}
	if id := s.Put(ReadLevel, make([]byte, MaxBytes+1)); id != "" {
		t.Fatal("oversized body stored")
	}
	if l, _ := s.Last(ReadLevel); l != z {
		t.Fatal("refused put moved the last pointer")
	}
}

// TestEvictionLeastRecentlyUsed: the bounds evict the response used least
// recently, so one the agent is still paging through outlives newer ones.
func TestEvictionLeastRecentlyUsed(t *testing.T) {
	c := newClock()
	s := New(c.now)
	ids := make([]string, MaxEntries)
	for i := range ids {
		ids[i] = s.Put(ReadLevel, []byte("x"))
		c.add(time.Second)
	}
	if _, err := s.Range(ids[0], 0, 1, ReadLevel); err != nil { // the oldest put, read again
		t.Fatal(err)
	}
	s.Put(ReadLevel, []byte("y"))
	if _, err := s.Part(ids[0], 0, ReadLevel); err != nil {
		t.Fatalf("recently read response evicted: %v", err)
	}
	if _, err := s.Part(ids[1], 0, ReadLevel); !errors.Is(err, ErrNotFound) {
		t.Fatalf("least recently used response kept: %v", err)
	}

	s = New(c.now)
	big := bytes.Repeat([]byte("b"), 900<<10)
	x := s.Put(ReadLevel, big)
	y := s.Put(ReadLevel, big)
	if _, err := s.Part(x, 0, ReadLevel); err != nil {
		t.Fatal(err)
	}
	z := s.Put(ReadLevel, big) // over 2 MiB: y, used least recently, goes
	if _, err := s.Part(y, 0, ReadLevel); !errors.Is(err, ErrNotFound) {
		t.Fatalf("y kept: %v", err)
	}
	for _, id := range []string{x, z} {
		if _, err := s.Part(id, 0, ReadLevel); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExpiryOrder: responses expire in the order they were last used, each
// TTL after its own last use, whatever order they were stored in.
func TestExpiryOrder(t *testing.T) {
	c := newClock()
	s := New(c.now)
	a := s.Put(ReadLevel, []byte("a")) // t=0
	c.add(time.Minute)
	b := s.Put(ReadLevel, []byte("b")) // t=1m
	c.add(time.Minute)
	d := s.Put(ReadLevel, []byte("d")) // t=2m
	c.add(time.Minute)
	if _, err := s.Part(a, 0, ReadLevel); err != nil { // t=3m: a is now the most recent
		t.Fatal(err)
	}
	// Len, Last and a miss refresh nothing, so each step below lands just
	// past one entry's TTL measured from its own last use.
	c.add(TTL - 2*time.Minute + time.Second) // t=16m+1s: b (used at 1m) is over TTL
	if n, _ := s.Len(); n != 2 {
		t.Fatalf("t=16m+1s: %d entries, want a and d", n)
	}
	if _, err := s.Part(b, 0, ReadLevel); !errors.Is(err, ErrNotFound) {
		t.Fatalf("b outlived its TTL: %v", err)
	}
	if l, err := s.Last(ReadLevel); err != nil || l != d {
		t.Fatalf("last = %q %v, want d", l, err)
	}
	c.add(time.Minute) // t=17m+1s: d (2m) is over TTL, a (3m) is not
	if n, _ := s.Len(); n != 1 {
		t.Fatalf("t=17m+1s: %d entries, want a", n)
	}
	if _, err := s.Last(ReadLevel); !errors.Is(err, ErrNoResponse) {
		t.Fatal("expired last response still reported")
	}
	if _, err := s.Part(a, 0, ReadLevel); err != nil { // refreshes a at 17m+1s
		t.Fatalf("a expired early: %v", err)
	}
	c.add(TTL) // exactly TTL since a's last use: still live
	if n, _ := s.Len(); n != 1 {
		t.Fatalf("a expired at exactly TTL")
	}
	c.add(time.Nanosecond)
	if n, size := s.Len(); n != 0 || size != 0 {
		t.Fatalf("past TTL: %d entries, %d bytes", n, size)
	}
}

func TestTTL(t *testing.T) {
	c := newClock()
	s := New(c.now)
	a := s.Put(ReadLevel, []byte("a"))
	b := s.Put(ReadLevel, []byte("b"))
	c.add(10 * time.Minute)
	if _, err := s.Part(a, 0, ReadLevel); err != nil { // touching a restarts its timer
		t.Fatal(err)
	}
	c.add(6 * time.Minute)
	if _, err := s.Part(b, 0, ReadLevel); !errors.Is(err, ErrNotFound) {
		t.Fatalf("b outlived its TTL: %v", err)
	}
	if _, err := s.Last(ReadLevel); !errors.Is(err, ErrNoResponse) {
		t.Fatal("expired last response still reported")
	}
	if _, err := s.Part(a, 0, ReadLevel); err != nil {
		t.Fatalf("recently read a expired: %v", err)
	}
	c.add(TTL + time.Second)
	if n, bytes := s.Len(); n != 0 || bytes != 0 {
		t.Fatalf("after TTL: %d entries, %d bytes", n, bytes)
	}
}

func TestRenderParse(t *testing.T) {
	s := New(newClock().now)
	body := []byte(strings.Repeat("héllo ", 1000))
	id := s.Put(ReadLevel, body)
	r, _ := s.Part(id, 0, ReadLevel)
	out := r.Render("https://t.example/v0/AbCdEfGh/z?id=" + id + "&part=1")
	line, rest, _ := bytes.Cut(out, []byte("\n"))
	want := `GETMCP_RANGE {"id":"` + id + `","part":0,"parts":4,"offset":0,"length":2304,"total":7000,"hasMore":true,"next":"https://t.example/v0/AbCdEfGh/z?id=` + id + `&part=1"}`
	if string(line) != want {
		t.Fatalf("header:\n%s\nwant\n%s", line, want)
	}
	if !bytes.Equal(rest, r.Chunk) {
		t.Fatal("chunk differs")
	}
	m, chunk, err := Parse(out)
	if err != nil || m.ID != id || !bytes.Equal(chunk, r.Chunk) || *m.Part != 0 {
		t.Fatalf("Parse: %+v %v", m, err)
	}
	last, _ := s.Part(id, 3, ReadLevel)
	line, _, _ = bytes.Cut(last.Render("ignored"), []byte("\n"))
	if bytes.Contains(line, []byte("next")) {
		t.Fatalf("final part names a next URL: %s", line)
	}
	rg, _ := s.Range(id, 5, 10, ReadLevel)
	line, _, _ = bytes.Cut(rg.Render("n"), []byte("\n"))
	if bytes.Contains(line, []byte(`"part"`)) {
		t.Fatalf("offset mode reports a part: %s", line)
	}
	for _, bad := range []string{"", "GETMCP_RANGE", "GETMCP_RANGE {}", "GETMCP_RANGE {\"length\":3}\nab", "HTTP/1.1 200"} {
		if _, _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestConcurrent(t *testing.T) {
	s := New(nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				id := s.Put(ReadLevel, bytes.Repeat([]byte{byte('a' + g)}, 100+i))
				if _, err := s.Range(id, 0, 50, ReadLevel); err != nil && !errors.Is(err, ErrNotFound) {
					t.Error(err)
				}
				s.Last(ReadLevel)
			}
		})
	}
	wg.Wait()
}

// TestRecycledBodiesNeverLeak: once full, the store copies new answers into
// evicted answers' memory. Readers racing with those Puts must still get
// exactly the bytes of the response they named (each body here is one
// repeated byte), never a later answer's.
func TestRecycledBodiesNeverLeak(t *testing.T) {
	s := New(nil)
	var (
		mu   sync.Mutex
		fill = map[string]byte{}
		ids  []string
	)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 400 {
				c := byte('a' + (g*400+i)%26)
				id := s.Put(ReadLevel, bytesOf(c, 3000+i%7*10))
				mu.Lock()
				fill[id] = c
				ids = append(ids, id)
				mu.Unlock()
			}
		})
		wg.Go(func() {
			for i := range 800 {
				mu.Lock()
				if len(ids) == 0 {
					mu.Unlock()
					continue
				}
				id := ids[(i*7919)%len(ids)]
				want := fill[id]
				mu.Unlock()
				for _, get := range []func() (Range, error){
					func() (Range, error) { return s.Part(id, 1, ReadLevel) },
					func() (Range, error) { return s.Range(id, 100, 2000, ReadLevel) },
				} {
					r, err := get()
					if errors.Is(err, ErrNotFound) {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					for _, b := range r.Chunk {
						if b != want {
							t.Errorf("%s: chunk holds %q, want only %q", id, b, want)
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
	if n, size := s.Len(); n > MaxEntries || size > MaxBytes {
		t.Fatalf("%d entries, %d bytes", n, size)
	}
}

func bytesOf(c byte, n int) []byte { return bytes.Repeat([]byte{c}, n) }
