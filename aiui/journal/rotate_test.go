package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// bigText is prompt n of a record that rotates: 32 KiB, so a bound of
// 512 KiB keeps 15 (about 500 KiB live: the head passes rotateAfter, more
// than half dead, before its dead bytes reach 3× the live ones).
const bound, keep = 512 << 10, 15

func bigText(n int) string { return fmt.Sprintf("%04d", n) + strings.Repeat("r", 32<<10) }

// lastTexts is the texts the record should hold after prompts 0..n-1 into
// a bound of keep.
func lastTexts(n, keep int) string {
	var want []string
	for i := max(0, n-keep); i < n; i++ {
		want = append(want, bigText(i)+"@")
	}
	return strings.Join(want, "|")
}

// TestRotationNeverCopies: a record whose oldest prompts fall out as new
// ones come in rotates its head to prev and deletes prev once none of its
// prompts is live: no compaction ever runs, the files stay bounded and
// 0600, and every live prompt reads back.
func TestRotationNeverCopies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	j := open(t, path, 500, bound)
	rotations := 0
	var headBefore os.FileInfo
	for n := range 200 {
		deliver(t, j, bigText(n), "")
		head, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if headBefore != nil && !os.SameFile(head, headBefore) {
			rotations++
		}
		headBefore = head
		total := head.Size()
		if prev, err := os.Stat(path + ".prev"); err == nil {
			total += prev.Size()
			if m := adaptertest.FileMode(t, path+".prev"); m != 0o600 {
				t.Fatalf("prev is %v", m)
			}
		}
		if limit := int64(3*rotateAfter + bound); total > limit {
			t.Fatalf("after %d prompts the record takes %d bytes on disk (> %d)", n+1, total, limit)
		}
	}
	if j.compactions != 0 || rotations < 3 {
		t.Fatalf("%d compactions and %d rotations over 200 prompts of 32 KiB into a 256 KiB bound", j.compactions, rotations)
	}
	if got, want := texts(t, path), lastTexts(200, j.Len()); got != want || j.Len() != keep {
		t.Fatalf("after rotations the record holds %d prompts:\n%.200q\nwant\n%.200q", j.Len(), got, want)
	}
	j2 := open(t, path, 500, bound)
	if j2.Len() != j.Len() || j2.Entries()[0].ID != j.Entries()[0].ID {
		t.Fatalf("reopened: %d prompts from %s, want %d from %s", j2.Len(), j2.Entries()[0].ID, j.Len(), j.Entries()[0].ID)
	}
}

// TestTwoJournalsAcrossRotations: two backends delivering into one
// rotating record both see every prompt, seqs stay unique, and a view
// opened before a rotation still reads.
func TestTwoJournalsAcrossRotations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	a := open(t, path, 500, bound)
	b := open(t, path, 500, bound)
	first := deliver(t, a, bigText(0), "")
	v := a.View(first)
	defer v.Close()
	seqs := map[int64]bool{first.Seq: true}
	for n := 1; n < 120; n++ {
		j := a
		if n%3 == 0 {
			j = b
		}
		e := deliver(t, j, bigText(n), "")
		if seqs[e.Seq] {
			t.Fatalf("seq %d given twice", e.Seq)
		}
		seqs[e.Seq] = true
	}
	if r, err := v.Record(); err != nil || r.Text != bigText(0) {
		t.Fatalf("a view across rotations read %.20q, %v", r.Text, err)
	}
	want := lastTexts(120, keep)
	for name, j := range map[string]*Journal{"a": a, "b": b} {
		j.Begin()
		n, id := j.Len(), j.Entries()[0].ID
		r := record(t, j, j.Entries()[0], "")
		j.End()
		if n != keep || r.Text != bigText(120-keep) || id != a.Entries()[0].ID {
			t.Fatalf("%s sees %d prompts from %.8q", name, n, r.Text)
		}
	}
	if got := texts(t, path); got != want {
		t.Fatalf("record = %.200q", got)
	}
	if a.compactions+b.compactions != 0 {
		t.Fatalf("%d compactions", a.compactions+b.compactions)
	}
}

// TestCrashMidRotation: a crash between moving the head to prev and
// creating the new head loses nothing; the next open creates the head.
func TestCrashMidRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	j := open(t, path, 500, bound)
	for n := range 5 {
		deliver(t, j, bigText(n), "")
	}
	j.Close()
	if err := os.Rename(path, path+".prev"); err != nil {
		t.Fatal(err)
	}
	if got := texts(t, path); got != lastTexts(5, 5) {
		t.Fatalf("lock-free read with no head = %.100q", got)
	}
	j = open(t, path, 500, bound)
	if e := deliver(t, j, bigText(5), ""); e.Seq != 6 || j.Len() != 6 {
		t.Fatalf("after the crash: seq %d, %d prompts", e.Seq, j.Len())
	}
	for n := 6; n < 40; n++ {
		deliver(t, j, bigText(n), "")
	}
	if got := texts(t, path); got != lastTexts(40, keep) {
		t.Fatalf("record = %.100q", got)
	}
}

// TestCrashMidCompactionWithPrev: a compaction that takes prev's live
// lines into a new head and is cut short before it deletes prev leaves a
// head starting with a base line: prev is ignored and deleted, so no
// prompt appears twice and none that fell out comes back.
func TestCrashMidCompactionWithPrev(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	j := open(t, path, 500, bound)
	n := 0
	for ; j.prev == nil; n++ {
		if n == 200 {
			t.Fatal("no rotation after 200 prompts")
		}
		deliver(t, j, bigText(n), "")
	}
	deliver(t, j, bigText(n), "mcp:f") // one in the new head, taken
	n++
	stale, err := os.ReadFile(path + ".prev")
	if err != nil {
		t.Fatal(err)
	}
	before := texts(t, path)
	j.Begin()
	if err := j.compactNow(); err != nil {
		t.Fatal(err)
	}
	j.End()
	if _, err := os.Stat(path + ".prev"); err == nil {
		t.Fatal("a compaction left prev")
	}
	os.WriteFile(path+".prev", stale, 0o600) // as if it crashed before deleting it
	if got := texts(t, path); got != before {
		t.Fatalf("lock-free read after the cut compaction = %.100q, want %.100q", got, before)
	}
	k := open(t, path, 500, bound)
	if k.Len() != keep || k.Lookup(j.Entries()[keep-1].ID).To != "mcp:f" {
		t.Fatalf("reopened after the cut compaction: %d prompts", k.Len())
	}
	if _, err := os.Stat(path + ".prev"); err == nil {
		t.Fatal("the stale prev was not deleted")
	}
	deliver(t, k, bigText(n), "")
	if got := texts(t, path); !strings.HasSuffix(got, bigText(n)+"@") || strings.Count(got, "|") != keep-1 {
		t.Fatalf("record = %.100q", got)
	}
}

// The last close of a file the record unlinked (a rotated head once none
// of its prompts is live, a head a compaction replaced) is handed to
// closeRemoved, still open, and no other file is: that close frees the
// file's pages, which the caller must not wait for.
func TestRemovedFilesCloseOffTheCaller(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  func(n int) string
		bound int64
		limit int
	}{
		{"rotation", bigText, bound, 500},
		{"compaction", func(n int) string { return fmt.Sprintf("small %d", n) }, 1 << 20, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "prompts.jsonl")
			handed := 0
			old := closeRemoved
			closeRemoved = func(f *os.File) {
				defer f.Close()
				handed++
				fi, err := f.Stat()
				if err != nil {
					t.Fatalf("handed a closed file: %v", err)
				}
				for _, p := range []string{path, path + ".prev"} {
					if cur, err := os.Stat(p); err == nil && os.SameFile(fi, cur) {
						t.Fatalf("handed %s, which is still in place", p)
					}
				}
			}
			t.Cleanup(func() { closeRemoved = old })
			j := open(t, path, tc.limit, tc.bound)
			for n := range 200 {
				deliver(t, j, tc.text(n), "")
			}
			if handed == 0 {
				t.Fatalf("no file handed over (%d compactions)", j.compactions)
			}
			if got, want := texts(t, path), lastTexts(200, j.Len()); tc.name == "rotation" && got != want {
				t.Fatalf("the record holds %.200q, want %.200q", got, want)
			}
		})
	}
}
