package replay

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// FuzzRange checks the range arithmetic on arbitrary bytes: no panic, the
// chunk is exactly body[Offset:Offset+Length], the start never moves forward
// or more than three bytes back, and following NextOffset with the same
// length reconstructs the body. Valid UTF-8 stays valid in every chunk.
func FuzzRange(f *testing.F) {
	f.Add([]byte("a😀b€c"), 2, 1)
	f.Add([]byte{0x80, 0x80, 0x80, 0x80, 0x80}, 2, 1)
	f.Add([]byte{}, 0, 1)
	f.Add(bytes.Repeat([]byte("€"), 1000), 1, 2)
	f.Fuzz(func(t *testing.T, body []byte, offset, length int) {
		s := New(nil)
		id := s.Put(ReadLevel, body)
		r, err := s.Range(id, offset, length, ReadLevel)
		if err != nil {
			return
		}
		if r.Offset > offset || r.Offset < offset-3 || r.Offset+r.Length > len(body) {
			t.Fatalf("offset %d+%d → [%d,+%d) of %d", offset, length, r.Offset, r.Length, len(body))
		}
		if !bytes.Equal(r.Chunk, body[r.Offset:r.Offset+r.Length]) {
			t.Fatal("chunk is not the body slice")
		}
		if len(body) > 0 && r.Length == 0 {
			t.Fatal("empty chunk of a non-empty body")
		}
		valid := utf8.Valid(body)
		out := append([]byte(nil), body[:r.Offset]...)
		for steps := 0; ; steps++ {
			if valid && !utf8.Valid(r.Chunk) {
				t.Fatalf("chunk at %d splits a rune", r.Offset)
			}
			out = append(out, r.Chunk...)
			if !r.HasMore {
				break
			}
			if steps > len(body) {
				t.Fatal("no progress")
			}
			if r, err = s.Range(id, r.NextOffset, length, ReadLevel); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(out, body) {
			t.Fatal("reconstruction differs")
		}
		var parts []byte
		for n := 0; ; n++ {
			p, err := s.Part(id, n, ReadLevel)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Chunk) > PartSize || (valid && !utf8.Valid(p.Chunk)) {
				t.Fatalf("bad part %d", n)
			}
			parts = append(parts, p.Chunk...)
			if !p.HasMore {
				break
			}
		}
		if !bytes.Equal(parts, body) {
			t.Fatal("parts differ")
		}
	})
}

// FuzzParse checks Parse never panics and accepts only what Render makes.
func FuzzParse(f *testing.F) {
	s := New(nil)
	id := s.Put(ReadLevel, []byte("hello world"))
	r, _ := s.Range(id, 0, 5, ReadLevel)
	f.Add(r.Render("next"))
	f.Add([]byte("GETMCP_RANGE {\"length\":-1}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, chunk, err := Parse(b)
		if err == nil && len(chunk) != m.Length {
			t.Fatal("length mismatch accepted")
		}
	})
}
