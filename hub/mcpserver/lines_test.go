package mcpserver

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// frames is what a stream means, one entry per line: the trimmed line, or
// "<too long>".
func frames(t testing.TB, r io.Reader, max int) []string {
	lr := newLineReader(r, max, 16)
	var out []string
	for {
		line, err := lr.next()
		switch {
		case err == errLineTooLong:
			out = append(out, "<too long>")
		case err == io.EOF:
			return out
		case err != nil:
			t.Fatalf("next: %v", err)
		default:
			out = append(out, string(line))
		}
	}
}

// referenceFrames is the framing rule written the obvious way.
func referenceFrames(stream []byte, max int) []string {
	var out []string
	for _, line := range bytes.SplitAfter(stream, []byte{'\n'}) {
		body := bytes.TrimSuffix(line, []byte{'\n'})
		switch {
		case len(body) > max:
			out = append(out, "<too long>")
		case len(bytes.TrimSpace(body)) > 0:
			out = append(out, string(bytes.TrimSpace(body)))
		}
	}
	return out
}

func TestLineReaderFraming(t *testing.T) {
	cases := []struct {
		name   string
		stream string
		max    int
		want   []string
	}{
		{"lines", "a\nb\n", 8, []string{"a", "b"}},
		{"last line unterminated", "a\nb", 8, []string{"a", "b"}},
		{"blank and padded", "\n  \n a \r\n\n", 8, []string{"a"}},
		{"exactly the limit", "12345678\n", 8, []string{"12345678"}},
		{"one over", "123456789\nok\n", 8, []string{"<too long>", "ok"}},
		{"far over, past the buffer", string(bytes.Repeat([]byte("x"), 100)) + "\nok", 8, []string{"<too long>", "ok"}},
		{"over at the end", "ok\n" + string(bytes.Repeat([]byte("y"), 40)), 8, []string{"ok", "<too long>"}},
		{"empty", "", 8, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := frames(t, iotest.OneByteReader(bytes.NewReader([]byte(tc.stream))), tc.max)
			if !equal(got, tc.want) {
				t.Fatalf("frames = %q, want %q", got, tc.want)
			}
			if ref := referenceFrames([]byte(tc.stream), tc.max); !equal(ref, tc.want) {
				t.Fatalf("the reference says %q: the table is wrong", ref)
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// chunked reads stream in pieces of n bytes, as a pipe might deliver it.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.b))
	copy(p, c.b[:k])
	c.b = c.b[k:]
	return k, nil
}

// FuzzLineFraming: how a stream splits into messages must not depend on
// how its bytes arrive, and must match the obvious rule, over-long lines
// included.
func FuzzLineFraming(f *testing.F) {
	f.Add([]byte("a\nbb\n\n  c  \n"), 4, 3)
	f.Add([]byte("0123456789abcdef0123\nx\n"), 1, 16)
	f.Add([]byte("{\"jsonrpc\":\"2.0\"}\r\n[1]"), 7, 5)
	f.Add([]byte("\n\n\n"), 2, 1)
	f.Fuzz(func(t *testing.T, stream []byte, chunk, max int) {
		chunk = 1 + (chunk&63+64)%64
		max = 1 + (max&63+64)%64
		got := frames(t, &chunked{stream, chunk}, max)
		if want := referenceFrames(stream, max); !equal(got, want) {
			t.Fatalf("chunks of %d, max %d:\n got %q\nwant %q", chunk, max, got, want)
		}
	})
}
