package replay

import (
	"bytes"
	"testing"

	"github.com/hubdev/hub/internal/cputime"
)

// BenchmarkPutAndReadParts stores a 30 KiB response (about a full /r) and
// reads it back part by part, rendering each range answer.
func BenchmarkPutAndReadParts(b *testing.B) {
	body := bytes.Repeat([]byte(`{"path":"/project/src/a.ts","content":"héllo wörld\n"},`), 30<<10/56)
	s := New(nil)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	done := cputime.Start(b)
	for b.Loop() {
		id := s.Put(ReadLevel, body)
		for n := 0; ; n++ {
			r, err := s.Part(id, n, ReadLevel)
			if err != nil {
				b.Fatal(err)
			}
			r.Render("https://example.test/v0/AbCdEfGh/z?id=" + id)
			if !r.HasMore {
				break
			}
		}
	}
	done()
}

// BenchmarkPutFullStore is one Put of a 4.7 KiB answer (a /r of a 4 KiB
// file) into a store already holding MaxEntries: the steady state of a busy
// session, where each Put expires and evicts.
func BenchmarkPutFullStore(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 4800)
	s := New(nil)
	for range MaxEntries {
		s.Put(ReadLevel, body)
	}
	b.ReportAllocs()
	done := cputime.Start(b)
	for b.Loop() {
		s.Put(ReadLevel, body)
	}
	done()
}
