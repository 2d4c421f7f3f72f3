package jsonstr

import (
	"io"
	"os"
)

// ChunkBytes is the size of a Buffer's pooled chunks.
const ChunkBytes = 64 << 10

// freeChunks holds full-size chunks for reuse. It is a bounded free list
// rather than a sync.Pool: chunks are 64 KiB, so a busy backend
// allocates fast enough to trigger a GC every few dozen chunks, and each
// GC would empty a sync.Pool, turning every chunk into a fresh allocation
// (measured: 600 MB allocated in 3 s of the prompt benchmark). At most
// maxFreeChunks (4 MiB) stay held between bursts.
var freeChunks = make(chan *[]byte, maxFreeChunks)

const maxFreeChunks = 64

func getChunk() *[]byte {
	select {
	case c := <-freeChunks:
		*c = (*c)[:0]
		return c
	default:
		c := make([]byte, 0, ChunkBytes)
		return &c
	}
}

func putChunk(c *[]byte) {
	select {
	case freeChunks <- c:
	default:
	}
}

// Buffer holds JSON string contents in chunks: growing it never copies
// what it holds, and Reset returns full-size chunks to a pool, so a long
// prompt costs no garbage per frame. The first chunk grows by append up to
// ChunkBytes, so a thread holding a few bytes does not pin a whole chunk.
// With Spill set, contents that grow past SpillAfter bytes move to a file,
// all of them. The zero value is empty and ready to use.
type Buffer struct {
	chunks  []*[]byte
	mem     int // bytes in chunks
	decoded int

	// Spill opens the file the contents move to once they would pass
	// SpillAfter bytes (read back by WriteTo, closed by Reset); nil keeps
	// all in memory.
	Spill      func() (*os.File, error)
	SpillAfter int
	spill      *os.File
	spilled    int64
}

// Len is the number of encoded bytes held.
func (b *Buffer) Len() int { return b.mem + int(b.spilled) }

// Decoded is the length of the string the contents decode to, as reported
// by the writers (Scan's count for Write, the string's own for
// WriteString).
func (b *Buffer) Decoded() int { return b.decoded }

// Write appends contents already valid (see Scan) that decode to decoded
// bytes; p is copied, so it may be a view into a frame. It fails only
// when a spill file cannot be written (nothing of p is kept then).
func (b *Buffer) Write(p []byte, decoded int) error {
	if b.Spill != nil && b.spill == nil && b.mem+len(p) > b.SpillAfter {
		if err := b.startSpill(); err != nil {
			b.Spill = nil // no file: keep it all in memory
		}
	}
	if b.spill != nil {
		if _, err := b.spill.WriteAt(p, b.spilled); err != nil {
			return err
		}
		b.spilled += int64(len(p))
		b.decoded += decoded
		return nil
	}
	b.decoded += decoded
	b.mem += len(p)
	for len(p) > 0 {
		c := b.tail(len(p))
		k := min(len(p), cap(*c)-len(*c))
		*c = append(*c, p[:k]...)
		p = p[k:]
	}
	return nil
}

// startSpill moves what memory holds to a new spill file: from then on
// a long text holds no memory at all.
func (b *Buffer) startSpill() error {
	f, err := b.Spill()
	if err != nil {
		return err
	}
	var off int64
	for _, c := range b.chunks {
		if _, err := f.WriteAt(*c, off); err != nil {
			f.Close()
			return err
		}
		off += int64(len(*c))
	}
	b.releaseChunks()
	b.spill, b.spilled, b.mem = f, off, 0
	return nil
}

// WriteString appends s encoded (in memory: it is for short texts).
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
		b.mem += len(enc)
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
		c := sizedChunk(max(want, 256))
		b.chunks = append(b.chunks, &c)
	}
	c := b.chunks[len(b.chunks)-1]
	if len(*c) < cap(*c) {
		return c
	}
	if len(b.chunks) == 1 && cap(*c) < ChunkBytes {
		*c = append(sizedChunk(max(2*cap(*c), len(*c)+want)), *c...)
		return c
	}
	c = getChunk()
	b.chunks = append(b.chunks, c)
	return c
}

// sizedChunk is an empty first chunk with room for n bytes: a small one
// for a short text, else (past half a chunk, so a frame-sized first write
// reuses one too) a full-size one from the free list.
func sizedChunk(n int) []byte {
	if n <= ChunkBytes/2 {
		return make([]byte, 0, n)
	}
	return (*getChunk())[:0]
}

// WriteTo writes the contents to w: the chunks, then what was spilled
// (copied file to file in the kernel when w is a file).
func (b *Buffer) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, c := range b.chunks {
		m, err := w.Write(*c)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	if b.spilled == 0 {
		return n, nil
	}
	if _, err := b.spill.Seek(0, io.SeekStart); err != nil {
		return n, err
	}
	m, err := io.Copy(w, io.LimitReader(b.spill, b.spilled))
	return n + m, err
}

// AppendChunks appends the in-memory pieces that make up the contents,
// in order, to dst (views into b, valid until it changes); ok is false,
// and dst unchanged, when part of the contents is in the spill file.
func (b *Buffer) AppendChunks(dst [][]byte) (_ [][]byte, ok bool) {
	if b.spilled > 0 {
		return dst, false
	}
	for _, c := range b.chunks {
		dst = append(dst, *c)
	}
	return dst, true
}

// Bytes copies the contents into one slice.
func (b *Buffer) Bytes() []byte {
	out := make([]byte, 0, b.Len())
	for _, c := range b.chunks {
		out = append(out, *c...)
	}
	if b.spilled > 0 {
		out = out[:b.Len()]
		b.spill.ReadAt(out[b.mem:], 0)
	}
	return out
}

// Preview decodes at most the first n encoded bytes (cut between escapes),
// for traces and logs.
func (b *Buffer) Preview(n int) string {
	var head []byte
	switch {
	case b.spilled > 0:
		head = make([]byte, min(int64(n), b.spilled))
		b.spill.ReadAt(head, 0)
	case len(b.chunks) > 0:
		head = *b.chunks[0]
		if len(head) < n && b.mem > len(head) {
			head = b.Bytes()
		}
	}
	s, _ := Decode(Prefix(head, n))
	return s
}

// Reset empties b, returns its full-size chunks to the pool and closes
// its spill file. Spill and SpillAfter stay set.
func (b *Buffer) Reset() {
	b.releaseChunks()
	b.mem, b.decoded = 0, 0
	if b.spill != nil {
		b.spill.Close()
		b.spill, b.spilled = nil, 0
	}
}

func (b *Buffer) releaseChunks() {
	for _, c := range b.chunks {
		if cap(*c) == ChunkBytes {
			putChunk(c)
		}
	}
	clear(b.chunks)
	b.chunks = b.chunks[:0]
}

// OpenSpill opens an anonymous file in dir for a Buffer's spill: unnamed
// (O_TMPFILE where the file system has it, else created and removed at
// once), so nothing is left behind by a crash.
func OpenSpill(dir string) (*os.File, error) {
	if f, err := openTmpfile(dir); err == nil {
		return f, nil
	}
	f, err := os.CreateTemp(dir, ".spill-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}
