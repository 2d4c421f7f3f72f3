package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdvance: after a short vectored write of n bytes, what is left to
// write is exactly the pieces' bytes from n on.
func TestAdvance(t *testing.T) {
	pieces := []string{`{"text":"`, "", "abc", "defgh", "", "i", `","id":"x"}` + "\n"}
	all := strings.Join(pieces, "")
	for n := 0; n <= len(all); n++ {
		bufs := make([][]byte, len(pieces))
		for i, p := range pieces {
			bufs[i] = []byte(p)
		}
		left := advance(bufs, n)
		if got := string(bytes.Join(left, nil)); got != all[n:] {
			t.Errorf("advance by %d left %q, want %q", n, got, all[n:])
		}
		if len(left) > 0 && len(left[0]) == 0 {
			t.Errorf("advance by %d left an empty first piece", n)
		}
	}
}

// TestWriteVecAt: the pieces land one after another at the offset, the
// bytes before it stay, and the file's own offset does not move.
func TestWriteVecAt(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("head|"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(1, 0); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 70<<10)
	n, err := writeVecAt(f, [][]byte{[]byte("a"), nil, big, []byte("z\n")}, 5)
	if err != nil || n != int64(len(big)+3) {
		t.Fatalf("wrote %d, %v", n, err)
	}
	if off, _ := f.Seek(0, 1); off != 1 {
		t.Errorf("the file offset moved to %d", off)
	}
	got, _ := os.ReadFile(f.Name())
	if want := "head|a" + string(big) + "z\n"; string(got) != want {
		t.Errorf("file holds %d bytes, want %d (%q…)", len(got), len(want), got[:min(len(got), 12)])
	}
}
