package terminal

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStripANSI(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain\ttext\r\n", "plain\ttext\r\n"},
		{"\x1b[31mred\x1b[0m", "red"},
		{"\x1b[1;32;40mbold\x1b[22m", "bold"},
		{"\x1b[?25l\x1b[2K\x1b[1Gprogress", "progress"},
		{"\x1b]0;title\x07after", "after"},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"\x1b(Bascii", "ascii"},
		{"\x1bMup", "up"},
		{"bell\x07 nul\x00 bs\x08 del\x7f", "bell nul bs del"},
		{"\x1b[31\nx", "\nx"},
		{"\x1b\nkeep", "\nkeep"},
		{"héllo \x1b[36m➜\x1b[39m", "héllo ➜"},
	} {
		if got := stripANSI(tc.in); got != tc.want {
			t.Errorf("stripANSI(%q) = %q; want %q", tc.in, got, tc.want)
		}
		// Byte by byte gives the same result: state survives writes.
		var a ansiStripper
		var out []byte
		for i := 0; i < len(tc.in); i++ {
			out = a.strip(out, []byte{tc.in[i]})
		}
		if string(out) != tc.want {
			t.Errorf("byte-wise strip(%q) = %q; want %q", tc.in, out, tc.want)
		}
	}
}

func TestStripANSIAbandonsRunawaySequence(t *testing.T) {
	in := "\x1b]" + strings.Repeat("x", maxEscape+10) + "tail"
	if got := stripANSI(in); !strings.HasSuffix(got, "tail") || len(got) > 20 {
		t.Errorf("runaway OSC: %q", got)
	}
}

func TestRedactor(t *testing.T) {
	root := "/home/u/work/app"
	in := "cd /home/u/work/app/src; ls /home/u/work/app\n/home/u/work/ap\n/home/u/work/app"
	want := strings.ReplaceAll(in, root, "/project")
	for split := 1; split <= len(in); split++ {
		r := newRedactor(root, "/project", false)
		var out []byte
		for i := 0; i < len(in); i += split {
			out = r.write(out, []byte(in[i:min(i+split, len(in))]))
		}
		out = r.flush(out)
		if string(out) != want {
			t.Fatalf("split %d: %q", split, out)
		}
	}
	// Only a tail that could start the root is held back.
	r := newRedactor(root, "/project", false)
	if got := string(r.write(nil, []byte("port 9000\n"))); got != "port 9000\n" {
		t.Errorf("held back %q", got)
	}
	if got := string(r.write(nil, []byte("at /home/u/wo"))); got != "at " {
		t.Errorf("emitted %q", got)
	}
	if got := string(r.write(nil, []byte("rk/app!"))); got != "/project!" {
		t.Errorf("emitted %q", got)
	}
	r = newRedactor("/", "/project", false)
	if got := string(r.flush(r.write(nil, []byte("/etc/x")))); got != "/etc/x" {
		t.Errorf("root / redacts: %q", got)
	}
}

// FuzzRedactor: streaming redaction equals strings.ReplaceAll whatever the
// read boundaries, and the root never survives.
func FuzzRedactor(f *testing.F) {
	f.Add("a/r/oot/b/r/oo", uint8(3))
	f.Add("/r/oot/r/oot/r/oot", uint8(1))
	f.Fuzz(func(t *testing.T, s string, split uint8) {
		const root = "/r/oot"
		n := int(split%16) + 1
		r := newRedactor(root, "/project", false)
		var out []byte
		for i := 0; i < len(s); i += n {
			out = r.write(out, []byte(s[i:min(i+n, len(s))]))
		}
		out = r.flush(out)
		if want := strings.ReplaceAll(s, root, "/project"); string(out) != want {
			t.Fatalf("got %q want %q", out, want)
		}
	})
}

func TestCaptureWhole(t *testing.T) {
	c := newCapture(64)
	c.write([]byte("hello "))
	c.write([]byte("world"))
	o := c.snapshot()
	if o.Text != "hello world" || o.Bytes != 11 || o.Truncated || o.Omitted != 0 {
		t.Fatalf("%+v", o)
	}
}

func TestCaptureHeadAndTail(t *testing.T) {
	c := newCapture(20)
	var all bytes.Buffer
	for i := range 50 {
		line := []byte{byte('a' + i%26), '\n'}
		all.Write(line)
		c.write(line)
	}
	o := c.snapshot()
	if !o.Truncated || o.Bytes != 100 || o.Omitted != 80 {
		t.Fatalf("%+v", o)
	}
	head, tail, ok := strings.Cut(o.Text, "[… 80 bytes omitted …]\n")
	if !ok || head != all.String()[:10] || tail != all.String()[90:] {
		t.Fatalf("text %q", o.Text)
	}
}

func TestCaptureUTF8Cuts(t *testing.T) {
	// 3-byte characters straddle both cuts.
	s := strings.Repeat("€", 40)
	for limit := 4; limit < 30; limit++ {
		c := newCapture(limit)
		for i := 0; i < len(s); i += 7 {
			c.write([]byte(s[i:min(i+7, len(s))]))
		}
		o := c.snapshot()
		if !utf8.ValidString(o.Text) || strings.ContainsRune(o.Text, utf8.RuneError) {
			t.Fatalf("limit %d: %q", limit, o.Text)
		}
		head, tail, _ := strings.Cut(o.Text, "[…")
		head = strings.TrimSuffix(head, "\n")
		_, tail, _ = strings.Cut(tail, "…]\n")
		if int64(len(head)+len(tail))+o.Omitted != o.Bytes {
			t.Fatalf("limit %d: %d + %d + %d != %d", limit, len(head), len(tail), o.Omitted, o.Bytes)
		}
	}
}

// FuzzCapture: the view is valid UTF-8, bounded, and accounts for every byte.
func FuzzCapture(f *testing.F) {
	f.Add([]byte("héllo wörld ✓"), uint16(5), uint8(3))
	f.Add([]byte{0xff, 0xe2, 0x82}, uint16(2), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, limit uint16, split uint8) {
		lim := int(limit%512) + 2
		n := int(split%32) + 1
		c := newCapture(lim)
		for i := 0; i < len(data); i += n {
			c.write(data[i:min(i+n, len(data))])
		}
		o := c.snapshot()
		if !utf8.ValidString(o.Text) {
			t.Fatal("invalid UTF-8")
		}
		if o.Bytes != int64(len(data)) {
			t.Fatalf("bytes %d of %d", o.Bytes, len(data))
		}
		if o.Truncated != (len(data) > lim) {
			t.Fatalf("truncated %v with %d > %d", o.Truncated, len(data), lim)
		}
		if len(o.Text) > 3*lim+64 { // U+FFFD may replace single bytes
			t.Fatalf("text %d bytes for limit %d", len(o.Text), lim)
		}
	})
}
