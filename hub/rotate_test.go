package hub

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRotatingFileCapsTheLog: writes past MaxSize shift the log to .1 and
// .2 and start a fresh file; nothing beyond Keep old files is kept, every
// file stays under the cap, and the newest lines are all there in order.
// Both ways to rotate run here: linking (unix) and closing first
// (Windows, where an open file cannot be renamed).
func TestRotatingFileCapsTheLog(t *testing.T) {
	for _, closeFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("closeFirst=%v", closeFirst), func(t *testing.T) { testRotatingFileCaps(t, closeFirst) })
	}
}

func testRotatingFileCaps(t *testing.T, closeFirst bool) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hub.log")
	r, err := OpenRotating(path, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	r.closeFirst = closeFirst
	defer r.Close()
	var lines []string
	for i := range 20 {
		line := fmt.Sprintf("{\"msg\":\"line %02d\",\"pad\":\"xxxx\"}\n", i) // 31 bytes: 3 to a file
		lines = append(lines, line)
		if _, err := r.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	var kept string
	for _, p := range []string{path + ".2", path + ".1", path} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 100 {
			t.Errorf("%s is %d bytes, over the 100-byte cap", filepath.Base(p), len(b))
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", filepath.Base(p), fi.Mode().Perm())
		}
		kept += string(b)
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Fatal("a third old file was kept")
	}
	// Files of three lines: 12–14 in .2, 15–17 in .1, 18–19 current.
	if want := strings.Join(lines[12:], ""); kept != want {
		t.Fatalf("kept %q, want the newest eight lines %q", kept, want)
	}
}

func TestRotatingFileRefusesAPlantedLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("x"), 0o600)
	path := filepath.Join(dir, "hub.log")
	os.Symlink(victim, path)
	if _, err := OpenRotating(path, 100, 2); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("OpenRotating over a link = %v", err)
	}
}

func TestRotateFilesKeepsN(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hub.log")
	for i := range 4 {
		os.WriteFile(path, []byte(fmt.Sprint(i)), 0o600)
		if err := RotateFiles(path, 2); err != nil {
			t.Fatal(err)
		}
	}
	one, _ := os.ReadFile(path + ".1")
	two, _ := os.ReadFile(path + ".2")
	if string(one) != "3" || string(two) != "2" {
		t.Fatalf(".1 = %q, .2 = %q", one, two)
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Fatal(".3 exists")
	}
	if err := RotateFiles(filepath.Join(dir, "missing"), 2); err != nil {
		t.Fatalf("missing file: %v", err)
	}
}

// A reader never finds the log missing while it rotates (`hub logs`, a
// test checking its size): the current file is linked as .1 and a fresh
// one renamed over the path, and only Keep old files stay.
func TestRotatingFileNeverMissing(t *testing.T) {
	for _, keep := range []int{1, 2} {
		dir := t.TempDir()
		path := filepath.Join(dir, "hub.log")
		r, err := OpenRotating(path, 100, keep)
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		missing := make(chan error, 1)
		go func() {
			for {
				select {
				case <-stop:
					missing <- nil
					return
				default:
				}
				if _, err := os.Stat(path); err != nil {
					missing <- err
					return
				}
			}
		}()
		for i := range 2000 {
			fmt.Fprintf(r, "line %04d of forty bytes, give or take\n", i)
		}
		close(stop)
		if err := <-missing; err != nil {
			t.Fatalf("keep %d: the log went missing while rotating: %v", keep, err)
		}
		r.Close()
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		want := map[int]string{1: "hub.log hub.log.1", 2: "hub.log hub.log.1 hub.log.2"}[keep]
		if got := strings.Join(names, " "); got != want {
			t.Fatalf("keep %d: files %s, want %s", keep, got, want)
		}
	}
}

// A log deleted while the hub runs comes back at the next rotation.
func TestRotatingFileRecreatesADeletedLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hub.log")
	r, err := OpenRotating(path, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fmt.Fprintln(r, "before the deletion")
	os.Remove(path)
	for i := range 10 {
		fmt.Fprintf(r, "line %d of forty bytes, give or take it\n", i)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "line 9") {
		t.Fatalf("the log did not come back: %q %v", b, err)
	}
}

// A log deleted while the hub runs comes back at the next Heal (the
// running hub calls it every few seconds), not only at the next rotation,
// which at 10 MiB may be days away: until then `hub logs` said there was
// no log while the hub wrote on into the deleted file.
func TestRotatingFileHealRecreatesADeletedLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hub.log")
	r, err := OpenRotating(path, 10<<20, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fmt.Fprintln(r, "before the deletion")
	if err := r.Heal(); err != nil { // nothing to do
		t.Fatal(err)
	}
	os.Remove(path)
	if err := r.Heal(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(r, "after the deletion")
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "after the deletion\n" {
		t.Fatalf("the log did not come back: %q %v", b, err)
	}
	// A link planted in its place is not followed: the hub writes on
	// where it did.
	os.Remove(path)
	os.Symlink(filepath.Join(dir, "victim"), path)
	if err := r.Heal(); err == nil {
		t.Fatal("Heal followed a planted link")
	}
	if _, err := os.Stat(filepath.Join(dir, "victim")); err == nil {
		t.Fatal("the link's target was created")
	}
}

// TestRotatingFileClosedRotationIgnoresAPlantedLink: rotating by closing
// first (Windows) never writes through a link planted at the path: the
// link is moved aside as .1 (a rename never follows it) and a fresh
// private file is made, where the next lines go.
func TestRotatingFileClosedRotationIgnoresAPlantedLink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hub.log")
	r, err := OpenRotating(path, 50, 2)
	if err != nil {
		t.Fatal(err)
	}
	r.closeFirst = true
	defer r.Close()
	fmt.Fprintln(r, strings.Repeat("a", 40))
	victim := filepath.Join(dir, "victim")
	os.Remove(path) // the writer still holds the file
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintln(r, strings.Repeat("b", 40)); err != nil {
		t.Fatalf("the write that rotated failed: %v", err)
	}
	if _, err := os.Lstat(victim); err == nil {
		t.Fatal("rotation wrote through a planted link")
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the fresh log: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(path); string(b) != strings.Repeat("b", 40)+"\n" {
		t.Fatalf("the fresh log holds %q", b)
	}
}
