package hub

import (
	"encoding/binary"
	"slices"
	"testing"
)

func TestStatStartTime(t *testing.T) {
	tail := " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20 21"
	for _, tt := range []struct {
		line, want string
	}{
		{"123 (hub)" + tail, "4242"},
		// a command name with spaces and a ")" of its own
		{"123 (a) b (c) d)" + tail, "4242"},
		{"123 (hub) S 1 2", ""},
		{"no parenthesis", ""},
		{"123 (hub) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 -1 20", ""},
	} {
		got, err := statStartTime([]byte(tt.line))
		if got != tt.want || (err == nil) != (tt.want != "") {
			t.Errorf("statStartTime(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
}

// procArgs2 builds what macOS's kern.procargs2 returns.
func procArgs2(argc int32, exe string, pad int, args ...string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(argc))
	b = append(b, exe...)
	b = append(b, make([]byte, 1+pad)...)
	for _, a := range args {
		b = append(append(b, a...), 0)
	}
	return append(b, "HOME=/Users/a\x00"...) // the environment, not read
}

func TestParseProcArgs2(t *testing.T) {
	for _, tt := range []struct {
		name string
		b    []byte
		exe  string
		argv []string
		ok   bool
	}{
		{"hub run", procArgs2(2, "/usr/local/bin/hub", 5, "hub", "run"), "/usr/local/bin/hub", []string{"hub", "run"}, true},
		{"no padding", procArgs2(1, "/bin/sh", 0, "sh"), "/bin/sh", []string{"sh"}, true},
		{"empty argument", procArgs2(3, "/x", 2, "x", "", "y"), "/x", []string{"x", "", "y"}, true},
		{"too short", []byte{1, 0}, "", nil, false},
		{"argc past the end", procArgs2(9, "/x", 0, "x")[:12], "", nil, false},
		{"negative argc", procArgs2(-1, "/x", 0, "x"), "", nil, false},
		{"no end to the path", append(binary.LittleEndian.AppendUint32(nil, 0), "/x"...), "", nil, false},
		{"an argument without its NUL", append(binary.LittleEndian.AppendUint32(nil, 1), "/x\x00\x00arg"...), "", nil, false},
	} {
		exe, argv, err := parseProcArgs2(tt.b)
		if (err == nil) != tt.ok || exe != tt.exe || !slices.Equal(argv, tt.argv) {
			t.Errorf("%s: parseProcArgs2 = %q %q %v; want %q %q ok=%v", tt.name, exe, argv, err, tt.exe, tt.argv, tt.ok)
		}
	}
}

func FuzzParseProcArgs2(f *testing.F) {
	f.Add(procArgs2(2, "/usr/local/bin/hub", 5, "hub", "run"))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		exe, argv, err := parseProcArgs2(b)
		if err != nil {
			return
		}
		n := len(exe)
		for _, a := range argv {
			n += len(a)
		}
		if n > len(b) {
			t.Fatalf("read %d bytes out of %d", n, len(b))
		}
	})
}

func FuzzStatStartTime(f *testing.F) {
	f.Add([]byte("1 (hub) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := statStartTime(b); err == nil && s == "" {
			t.Fatal("an empty start time accepted")
		}
	})
}
