package journal

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writerEnv makes the test binary a process appending prompts to a record
// forever, printing each seq once it is written (see TestMain).
const writerEnv = "JOURNAL_TEST_WRITER"

func TestMain(m *testing.M) {
	if path := os.Getenv(writerEnv); path != "" {
		os.Exit(runWriter(path))
	}
	os.Exit(m.Run())
}

func promptText(seq int64) string {
	return strings.Repeat(fmt.Sprintf("prompt %d says \"hi\"\n", seq), 96<<10)
}

// maxBytesEnv sets the writer's byte bound (default 1 GiB: no prompt
// falls out).
const maxBytesEnv = "JOURNAL_TEST_MAX_BYTES"

func runWriter(path string) int {
	maxBytes, err := strconv.ParseInt(os.Getenv(maxBytesEnv), 10, 64)
	if err != nil {
		maxBytes = 1 << 30
	}
	j, err := Open(path, 1000, maxBytes)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	// the next text is ready before a seq is printed, so the parent's
	// kill finds the writer appending, not composing
	next := body(promptText(1))
	for {
		if err := j.Begin(); err != nil {
			return 1
		}
		e, err := j.Append(Prompt{Body: next})
		if err != nil {
			return 1
		}
		j.End()
		next = body(promptText(e.Seq + 1))
		fmt.Println(e.Seq)
	}
}

// startWriter runs the writer on path with a byte bound and returns it
// with the seq it printed last once that reaches atLeast.
func startWriter(t *testing.T, path string, maxBytes, atLeast int64) (*exec.Cmd, int64) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), writerEnv+"="+path, fmt.Sprint(maxBytesEnv, "=", maxBytes))
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var last int64
	for last < atLeast && sc.Scan() {
		last, _ = strconv.ParseInt(sc.Text(), 10, 64)
	}
	return cmd, last
}

// TestKillAcrossRotations: a writer killed with SIGKILL in a record that
// rotates every few prompts (2 MiB prompts, a 4 MiB bound) leaves the
// newest prompts whole and in order, at most a head and a prev on disk,
// and a record the next writer continues.
func TestKillAcrossRotations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	var head *os.File
	for round := range 3 {
		cmd, last := startWriter(t, path, 4<<20, int64(12*(round+1)))
		cmd.Process.Kill()
		cmd.Wait()
		recs, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 || recs[len(recs)-1].Seq < last {
			t.Fatalf("round %d: %d prompts read back; the writer had finished %d", round, len(recs), last)
		}
		// the previous head stays open, so its inode number cannot be
		// reused by a new head
		if fi, err := os.Stat(path); err == nil && head != nil {
			if old, _ := head.Stat(); os.SameFile(fi, old) {
				t.Fatalf("round %d: 12 prompts of 2 MiB into a 4 MiB bound did not rotate the head", round)
			}
		}
		if f, err := os.Open(path); err == nil {
			defer f.Close()
			head = f
		}
		for i, r := range recs {
			if r.Text != promptText(r.Seq) || i > 0 && r.Seq != recs[i-1].Seq+1 {
				t.Fatalf("round %d: prompt %d read back as seq %d with %d bytes of text", round, i, r.Seq, len(r.Text))
			}
		}
		if files, _ := filepath.Glob(path + "*"); len(files) > 3 {
			t.Fatalf("round %d: the record left %v", round, files)
		}
	}
}

// TestKillMidAppend: a writer killed with SIGKILL while appending
// loses at most the prompt it was writing; every earlier one reads back
// whole, and the next writer appends after the torn line. Prompts are
// ~2 MiB, written in 64 KiB pieces, so the kill usually tears one.
func TestKillMidAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	cmd, last := startWriter(t, path, 1<<30, 10)
	cmd.Process.Kill()
	cmd.Wait()

	if data, _ := os.ReadFile(path); len(data) > 0 && data[len(data)-1] != '\n' {
		t.Logf("the kill tore a line (%d bytes after the last newline)", len(data)-1-strings.LastIndexByte(string(data), '\n'))
	}
	recs, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(recs)) < last {
		t.Fatalf("%d prompts read back, but the writer had finished %d", len(recs), last)
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) || r.Text != promptText(r.Seq) {
			t.Fatalf("prompt %d read back as seq %d with %d bytes of text", i+1, r.Seq, len(r.Text))
		}
	}
	j := open(t, path, 1000, 1<<30)
	e := deliver(t, j, "after the kill", "")
	recs, _ = Read(path)
	if n := len(recs); recs[n-1].Text != "after the kill" || recs[n-1].Seq != e.Seq || e.Seq != recs[n-2].Seq+1 {
		t.Fatalf("after the kill the record ends %+v (appended seq %d)", recs[n-1].Seq, e.Seq)
	}
}
