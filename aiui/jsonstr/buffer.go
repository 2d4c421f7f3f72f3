package jsonstr

import (
	"io"
	"sync"
)

// ChunkBytes is the size of a Buffer's pooled chunks.
const ChunkBytes = 64 << 10

var chunks = sync.Pool{New: func() any { b := make([]byte, 0, ChunkBytes); return &b }}

// Buffer holds JSON string contents in chunks: growing it never copies
// what it holds, and Reset returns full-size chunks to a pool, so a long
// prompt costs no garbage per frame. The first chunk grows by append up to
// ChunkBytes, so a thread holding a few bytes does not pin a whole chunk.
// The zero value is empty and ready to use.
type Buffer struct {
	chunks  []*[]byte
	n       int
	decoded int
}

// Len is the number of encoded bytes held.
func (b *Buffer) Len() int { return b.n }

// Decoded is the length of the string the contents decode to, as reported
// by the writers (Scan's count for Write, the string's own for
// WriteString).
func (b *Buffer) Decoded() int { return b.decoded }

// Write appends contents already valid (see Scan) that decode to decoded
// bytes; p is copied, so it may be a view into a frame.
func (b *Buffer) Write(p []byte, decoded int) {
	b.decoded += decoded
	b.n += len(p)
	for len(p) > 0 {
		c := b.tail(len(p))
		k := min(len(p), cap(*c)-len(*c))
		*c = append(*c, p[:k]...)
		p = p[k:]
	}
}

// WriteString appends s encoded.
func (b *Buffer) WriteString(s string) {
	b.decoded += len(s)
	// encode in pieces cut at rune starts into a stack buffer that holds
	// any piece's encoding (at most 6 bytes per input byte)
	const piece = 512
	var scratch [6 * piece]byte
	for len(s) > 0 {
		k := min(len(s), piece)
		for k < len(s) && k > 0 && s[k]&0xC0 == 0x80 {
			k--
		}
		if k == 0 {
			k = min(len(s), piece)
		}
		enc := Append(scratch[:0], s[:k])
		b.n += len(enc)
		for p := enc; len(p) > 0; {
			c := b.tail(len(p))
			m := min(len(p), cap(*c)-len(*c))
			*c = append(*c, p[:m]...)
			p = p[m:]
		}
		s = s[k:]
	}
}

// tail is the chunk to append to, with room for at least one byte.
func (b *Buffer) tail(want int) *[]byte {
	if len(b.chunks) == 0 {
		c := make([]byte, 0, min(max(want, 256), ChunkBytes))
		b.chunks = append(b.chunks, &c)
	}
	c := b.chunks[len(b.chunks)-1]
	if len(*c) < cap(*c) {
		return c
	}
	if len(b.chunks) == 1 && cap(*c) < ChunkBytes {
		g := make([]byte, len(*c), min(max(2*cap(*c), len(*c)+want), ChunkBytes))
		copy(g, *c)
		*c = g
		return c
	}
	c = chunks.Get().(*[]byte)
	*c = (*c)[:0]
	b.chunks = append(b.chunks, c)
	return c
}

// WriteTo writes the contents to w, chunk by chunk.
func (b *Buffer) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, c := range b.chunks {
		m, err := w.Write(*c)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Chunks are the contents in order; valid until the next Write or Reset.
func (b *Buffer) Chunks() [][]byte {
	out := make([][]byte, len(b.chunks))
	for i, c := range b.chunks {
		out[i] = *c
	}
	return out
}

// Bytes copies the contents into one slice.
func (b *Buffer) Bytes() []byte {
	out := make([]byte, 0, b.n)
	for _, c := range b.chunks {
		out = append(out, *c...)
	}
	return out
}

// Preview decodes at most the first n encoded bytes (cut between escapes),
// for traces and logs.
func (b *Buffer) Preview(n int) string {
	if len(b.chunks) == 0 {
		return ""
	}
	head := *b.chunks[0]
	if len(head) < n && len(b.chunks) > 1 {
		head = b.Bytes()
	}
	s, _ := Decode(Prefix(head, n))
	return s
}

// Reset empties b and returns its full-size chunks to the pool.
func (b *Buffer) Reset() {
	for _, c := range b.chunks {
		if cap(*c) == ChunkBytes {
			chunks.Put(c)
		}
	}
	clear(b.chunks)
	b.chunks, b.n, b.decoded = b.chunks[:0], 0, 0
}
