package jsonstr

import (
	"bytes"
	"encoding/json"
	"iter"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestScan(t *testing.T) {
	tests := []struct {
		in      string
		decoded int
		ok      bool
	}{
		{``, 0, true},
		{`plain ascii text`, 16, true},
		{`a\nb\tc\"d\\e\/f\bg\fh\ri`, 17, true},
		{`é → 😀`, len("é → 😀"), true},
		{`\u00e9`, 2, true},
		{`\ud83d\ude00`, 4, true},  // a surrogate pair is one rune
		{`\ud83d`, 3, true},        // a lone surrogate decodes to U+FFFD
		{`\ud83dx`, 4, true},       // ... also when text follows
		{`\ud83d\u0041`, 4, true},  // a high surrogate then a non-low one
		{`\ude00\ud83d`, 6, true},  // reversed: two replacements
		{`"`, 0, false},            // raw quote
		{"a\nb", 0, false},         // raw control byte
		{`\`, 0, false},            // cut escape
		{`\x`, 0, false},           // unknown escape
		{`\u12`, 0, false},         // short \u
		{`\u12g4`, 0, false},       // bad hex
		{"\xff", 0, false},         // invalid UTF-8
		{"ok\xe2\x82", 0, false},   // truncated rune
		{"\xed\xa0\x80", 0, false}, // an encoded surrogate is invalid UTF-8
		{strings.Repeat("x", 1000) + `"`, 0, false},
	}
	for _, tt := range tests {
		n, ok := Scan([]byte(tt.in))
		if ok != tt.ok || ok && n != tt.decoded {
			t.Errorf("Scan(%q) = %d, %v; want %d, %v", tt.in, n, ok, tt.decoded, tt.ok)
		}
		if ok {
			s, err := Decode([]byte(tt.in))
			if err != nil || len(s) != n {
				t.Errorf("Decode(%q) = %q, %v: length %d, Scan said %d", tt.in, s, err, len(s), n)
			}
		}
	}
}

func TestAppendRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", "line\nbreak\ttab\r\"q\" \\ /", "\x00\x01\x1f\x7f", "é → 😀 \u2028", "bad \xff utf8 \xe2\x82", strings.Repeat("ab\n", 5000)} {
		enc := Append(nil, s)
		if _, ok := Scan(enc); !ok {
			t.Fatalf("Append(%q) = %q does not scan", s, enc)
		}
		got, err := Decode(enc)
		if err != nil {
			t.Fatalf("round trip of %q: %v", s, err)
		}
		std, _ := json.Marshal(s)
		var want string
		json.Unmarshal(std, &want)
		if got != want {
			t.Fatalf("round trip of %q = %q, encoding/json gives %q", s, got, want)
		}
	}
}

func TestPrefixEndsBetweenEscapes(t *testing.T) {
	b := []byte(`ab\n\u00e9é\ud83d\ude00z`)
	for n := 0; n <= len(b)+1; n++ {
		p := Prefix(b, n)
		if len(p) > n {
			t.Fatalf("Prefix(%d) is %d bytes", n, len(p))
		}
		if _, ok := Scan(p); !ok {
			t.Fatalf("Prefix(%d) = %q does not scan", n, p)
		}
	}
}

// prefixBytewise is Prefix a byte, rune or escape at a time, without the
// bulk steps: what they must agree with.
func prefixBytewise(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	i := 0
	for i < n {
		size := stepLen(b, i)
		if i+size > n {
			break
		}
		i += size
	}
	return b[:i]
}

func TestPrefixAgreesBytewise(t *testing.T) {
	piece := []byte(`The quick brown fox\n jumps "over" é the\tlazy dog\u00e9; 狐狸\\ `)
	var b []byte
	for len(b) < 3000 {
		b = append(b, piece...)
	}
	for n := 0; n <= len(b)+1; n++ {
		if got, want := Prefix(b, n), prefixBytewise(b, n); len(got) != len(want) {
			t.Fatalf("Prefix(%d) is %d bytes, the bytewise scan %d", n, len(got), len(want))
		}
	}
}

func TestBuffer(t *testing.T) {
	var b Buffer
	want := ""
	for i := range 200 {
		s := strings.Repeat(string(rune('a'+i%26)), i*97) + "\n"
		enc := Append(nil, s)
		n, _ := Scan(enc)
		if err := b.Write(enc, n); err != nil {
			t.Fatal(err)
		}
		want += s
	}
	b.WriteString("tail é \"")
	want += "tail é \""
	got, err := Decode(b.Bytes())
	if err != nil || got != want || b.Decoded() != len(want) {
		t.Fatalf("buffer holds %d decoded bytes (counted %d), want %d: %v", len(got), b.Decoded(), len(want), err)
	}
	var w strings.Builder
	if n, err := b.WriteTo(&w); err != nil || int(n) != b.Len() || w.String() != string(b.Bytes()) {
		t.Fatalf("WriteTo wrote %d of %d: %v", n, b.Len(), err)
	}
	if p := b.Preview(10); p != "" && !strings.HasPrefix(want, p) {
		t.Fatalf("preview %q", p)
	}
	b.Reset()
	if b.Len() != 0 || b.Decoded() != 0 || len(b.Bytes()) != 0 {
		t.Fatal("Reset left contents")
	}
}

// TestBufferSmallThreadPinsLittle: a thread holding a few bytes must not
// pin a whole pooled chunk (a page may open a thousand threads).
func TestBufferSmallThreadPinsLittle(t *testing.T) {
	var b Buffer
	if err := b.Write([]byte("hi"), 2); err != nil {
		t.Fatal(err)
	}
	if c := cap(*b.chunks[0]); c > 1024 {
		t.Fatalf("a 2-byte buffer holds a %d-byte chunk", c)
	}
}

func FuzzScan(f *testing.F) {
	for _, s := range []string{``, `abc`, `\n`, `\ud83d\ude00`, `\ud83d`, `\u00`, "\xff", `"`, `\\\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ok := Scan(b)
		q := append(append([]byte{'"'}, b...), '"')
		var s string
		err := json.Unmarshal(q, &s)
		if ok && (err != nil || len(s) != n) {
			t.Fatalf("Scan(%q) = %d, ok; encoding/json: %q, %v", b, n, s, err)
		}
		if !ok && utf8.Valid(b) && err == nil {
			t.Fatalf("Scan(%q) refused what encoding/json accepts (%q)", b, s)
		}
		if d, derr := Decode(b); (derr == nil) != (err == nil) || d != s {
			t.Fatalf("Decode(%q) = %q, %v; encoding/json: %q, %v", b, d, derr, s, err)
		}
		p := Prefix(b, len(b)/2)
		if _, pok := Scan(p); ok && !pok {
			t.Fatalf("Prefix(%q) = %q does not scan", b, p)
		}
		if q := prefixBytewise(b, len(b)/2); len(p) != len(q) {
			t.Fatalf("Prefix(%q) = %q, the bytewise scan %q", b, p, q)
		}
		// in pieces (as a record line streams by): the same verdict and count
		if ok {
			for cut := range len(b) + 1 {
				end, n1, st := Span(b[:cut], false)
				if st != More {
					t.Fatalf("Span(%q[:%d], more to come) = %d, %v", b, cut, end, st)
				}
				rest, n2, st := Span(b[end:], true)
				if st != More || end+rest != len(b) || n1+n2 != n {
					t.Fatalf("Span of %q in pieces at %d: %d+%d bytes, %d+%d decoded, %v; whole: %d", b, cut, end, rest, n1, n2, st, n)
				}
			}
		}
	})
}

// FuzzPlainRun: the architecture's plainRun (assembly on amd64) and the
// portable one each answer what the contract allows, on every input.
func FuzzPlainRun(f *testing.F) {
	for _, s := range []string{``, strings.Repeat(`abc\n`, 20), strings.Repeat("x", 40) + `\u00e9` + strings.Repeat("y", 40), strings.Repeat(`\\`, 30) + `"`, strings.Repeat("é", 30), strings.Repeat("z", 17) + `\`, strings.Repeat("z", 63) + `\n` + strings.Repeat("z", 70), strings.Repeat(`\`, 65) + strings.Repeat("q", 64)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkPlainRun(t, "plainRun", b, plainRun)
		checkPlainRun(t, "plainRunGeneric", b, plainRunGeneric)
	})
}

// TestPlainRunEveryEscape: both plainRuns on a backslash and every byte
// after it, and on runs of backslashes, at every place in and across
// 64-byte blocks.
func TestPlainRunEveryEscape(t *testing.T) {
	for b := range escapeInputs() {
		checkPlainRun(t, "plainRun", b, plainRun)
		checkPlainRun(t, "plainRunGeneric", b, plainRunGeneric)
	}
}

func escapeInputs() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		plain := strings.Repeat("a", 140)
		for at := range 140 {
			for c := range 256 {
				if !yield([]byte(plain[:at] + `\` + string([]byte{byte(c)}) + plain)) {
					return
				}
			}
			for n := 1; n <= 5; n++ {
				for _, after := range []string{"u", "n", `"`, "\x00"} {
					if !yield([]byte(plain[:at] + strings.Repeat(`\`, n) + after + plain)) {
						return
					}
				}
			}
		}
	}
}

// checkPlainRun fails t unless run(b) answers what plainRun may: b[:i]
// is plain ASCII and whole one-letter escapes, shrink of them, and
// unless fewer than 16 bytes are left, b[i] starts neither.
func checkPlainRun(t *testing.T, name string, b []byte, run func([]byte) (int, int)) {
	t.Helper()
	i, shrink := run(b)
	plainAt := func(j int) bool { c := b[j]; return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' }
	escAt := func(j, end int) bool { return b[j] == '\\' && j+1 < end && oneLetterEscape(b[j+1]) }
	if i < 0 || i > len(b) {
		t.Fatalf("%s(%q) = %d, %d: out of range", name, b, i, shrink)
	}
	j, n := 0, 0
	for j < i {
		switch {
		case escAt(j, i):
			j, n = j+2, n+1
		case plainAt(j):
			j++
		default:
			t.Fatalf("%s(%q) = %d, %d: consumed %q at %d", name, b, i, shrink, b[j], j)
		}
	}
	if n != shrink {
		t.Fatalf("%s(%q) = %d, %d: %d escapes consumed", name, b, i, shrink, n)
	}
	if len(b)-i >= 16 && (plainAt(i) || escAt(i, len(b))) {
		t.Fatalf("%s(%q) = %d, %d: stopped before %q with %d bytes left", name, b, i, shrink, b[i:i+2], len(b)-i)
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "abc", "a\nb", "\xff", "é😀", "\x00\"\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := Append(nil, s)
		if _, ok := Scan(enc); !ok {
			t.Fatalf("Append(%q) = %q does not scan", s, enc)
		}
		std, _ := json.Marshal(s)
		var want string
		json.Unmarshal(std, &want)
		if got, err := Decode(enc); err != nil || got != want {
			t.Fatalf("Append(%q) decodes to %q, %v; want %q", s, got, err, want)
		}
		// Byte for byte what encoding/json writes with HTML escaping off.
		var std2 bytes.Buffer
		e := json.NewEncoder(&std2)
		e.SetEscapeHTML(false)
		e.Encode(s)
		if want := strings.TrimSuffix(std2.String(), "\n"); `"`+string(enc)+`"` != want {
			t.Fatalf("Append(%q) = %q, encoding/json writes %s", s, enc, want)
		}
	})
}

var sink int

func BenchmarkScan(b *testing.B) {
	text := []byte(strings.Repeat(`The quick brown fox jumps over the lazy dog; make the baseline amber.\n`, 1000))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		n, _ := Scan(text)
		sink += n
	}
}

func BenchmarkScanNonLatin(b *testing.B) {
	text := []byte(strings.Repeat(`敏捷的棕色狐狸跳过了懒狗；把基线改成琥珀色。\n`, 1000))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		n, _ := Scan(text)
		sink += n
	}
}

// BenchmarkPrefix is a prompt's 4 KiB trace preview.
func BenchmarkPrefix(b *testing.B) {
	text := []byte(strings.Repeat(`The quick brown fox jumps over the lazy dog; make the baseline amber.\n`, 1000))
	b.SetBytes(4 << 10)
	for b.Loop() {
		sink += len(Prefix(text, 4<<10))
	}
}

func BenchmarkAppend(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog; make the baseline amber.\n", 1000)
	dst := make([]byte, 0, 2*len(text))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		dst = Append(dst[:0], text)
	}
}

func BenchmarkStdValid(b *testing.B) {
	text := []byte(`{"text":"` + strings.Repeat(`The quick brown fox jumps over the lazy dog; make the baseline amber.\n`, 1000) + `"}`)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if json.Valid(text) {
			sink++
		}
	}
}

// TestSpanInPieces: contents fed in pieces of every size scan exactly as
// they do whole, escapes and runes cut at any point included.
func TestSpanInPieces(t *testing.T) {
	whole := []byte(`ab\n\u00e9é\ud83d\ude00\\\"z😀end" tail`)
	q := bytes.IndexByte(whole, '"')
	for q > 0 && whole[q-1] == '\\' {
		q = q + 1 + bytes.IndexByte(whole[q+1:], '"')
	}
	for piece := 1; piece <= len(whole); piece++ {
		var carry []byte
		pos, found := 0, -1
		for pos < len(whole) && found < 0 {
			next := min(pos+piece, len(whole))
			buf := append(carry, whole[pos:next]...)
			base := pos - len(carry)
			end, _, st := Span(buf, next == len(whole))
			switch st {
			case Bad:
				t.Fatalf("piece %d: Bad at %d", piece, base+end)
			case Closed:
				found = base + end
			}
			carry = append([]byte(nil), buf[end:]...)
			pos = next
		}
		if found != q {
			t.Fatalf("piece %d: quote at %d, want %d", piece, found, q)
		}
	}
}

// TestBufferSpills: once they would pass SpillAfter the contents move to
// the spill file, all of them (memory holds nothing more), and come back
// in order through WriteTo (file to file), Bytes and Preview.
func TestBufferSpills(t *testing.T) {
	dir := t.TempDir()
	b := Buffer{SpillAfter: 100 << 10, Spill: func() (*os.File, error) { return OpenSpill(dir) }}
	var want []byte
	for i := range 40 {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, 7<<10)
		if err := b.Write(p, len(p)); err != nil {
			t.Fatal(err)
		}
		want = append(want, p...)
	}
	if b.mem != 0 || len(b.chunks) != 0 || b.spilled != int64(len(want)) {
		t.Fatalf("%d bytes in memory, %d spilled", b.mem, b.spilled)
	}
	if p := b.Preview(10); p != string(want[:10]) {
		t.Fatalf("preview %q", p)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the spill file has a name: %v", entries)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatal("Bytes differ")
	}
	f, _ := os.Create(dir + "/out")
	if n, err := b.WriteTo(f); err != nil || n != int64(len(want)) {
		t.Fatalf("WriteTo: %d, %v", n, err)
	}
	f.Close()
	if got, _ := os.ReadFile(dir + "/out"); !bytes.Equal(got, want) {
		t.Fatal("WriteTo wrote other bytes")
	}
	b.Reset()
	if b.Len() != 0 || b.spill != nil {
		t.Fatal("Reset kept the spill")
	}
}
