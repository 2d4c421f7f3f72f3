package aiui

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestPruneTraces(t *testing.T) {
	type dir struct {
		name string
		age  time.Duration // since its last change
		size int
	}
	base := time.Now()
	cases := []struct {
		name     string
		dirs     []dir
		current  string
		maxDirs  int
		maxBytes int64
		want     []string // what stays, sorted
	}{
		{"within bounds", []dir{{"a", 3, 10}, {"b", 2, 10}, {"c", 1, 10}}, "c", 3, 100, []string{"a", "b", "c"}},
		{"count: oldest go", []dir{{"a", 3, 10}, {"b", 2, 10}, {"c", 1, 10}, {"d", 0, 10}}, "d", 2, 100, []string{"c", "d"}},
		{"bytes: oldest go", []dir{{"a", 3, 50}, {"b", 2, 50}, {"c", 1, 50}, {"d", 0, 10}}, "d", 10, 100, []string{"c", "d"}},
		{"oldest first, never a smaller older one", []dir{{"a", 3, 5}, {"b", 2, 80}, {"c", 1, 50}, {"d", 0, 10}}, "d", 10, 100, []string{"c", "d"}},
		{"current kept when alone over", []dir{{"a", 1, 10}, {"big", 0, 500}}, "big", 10, 100, []string{"big"}},
		{"current kept though oldest", []dir{{"cur", 5, 10}, {"b", 1, 10}, {"c", 0, 10}}, "cur", 2, 100, []string{"c", "cur"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			traces := t.TempDir()
			for _, d := range tc.dirs {
				p := filepath.Join(traces, d.name)
				if err := os.Mkdir(p, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(p, "shot_1.png"), make([]byte, d.size), 0o600); err != nil {
					t.Fatal(err)
				}
				at := base.Add(-d.age * time.Minute)
				if err := os.Chtimes(p, at, at); err != nil {
					t.Fatal(err)
				}
			}
			// not a trace directory: never touched
			if err := os.WriteFile(filepath.Join(traces, "note"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			pruneTraces(traces, map[string]bool{tc.current: true}, tc.maxDirs, tc.maxBytes)
			entries, err := os.ReadDir(traces)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				if e.Name() != "note" {
					got = append(got, e.Name())
				}
			}
			if len(got) != len(entries)-1 {
				t.Fatal("the file beside the trace directories was removed")
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("kept %v, want %v", got, tc.want)
			}
		})
	}
}

// A page names the project (its hello's source root), so one naming a new
// root every turn would get a fresh per-project budget each time: every
// project's traces share one budget too, oldest first across projects,
// and a project left with no traces goes, unless it holds anything else.
func TestPruneAllTraces(t *testing.T) {
	projects := t.TempDir()
	base := time.Now()
	mk := func(project, trace string, age time.Duration, size int) string {
		p := filepath.Join(projects, project, "traces", trace)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "seg_1.webm"), make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		at := base.Add(-age * time.Minute)
		os.Chtimes(p, at, at)
		return p
	}
	mk("a-1", "t1", 5, 40)
	mk("b-2", "t2", 4, 40)
	mk("c-3", "t3", 3, 40)
	if err := os.WriteFile(filepath.Join(projects, "c-3", "keep"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mk("d-4", "t4", 2, 40)
	mk("e-5", "t5", 1, 40)
	if n := pruneAllTraces(projects, map[string]bool{"t5": true}, 10, 100); n != 3 {
		t.Fatalf("removed %d traces, want 3 (only t5 and t4 fit in 100 bytes)", n)
	}
	entries, _ := os.ReadDir(projects)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if want := []string{"c-3", "d-4", "e-5"}; !slices.Equal(got, want) {
		t.Fatalf("projects left %v, want %v (c-3 holds another file)", got, want)
	}
}

// Another turn of this backend still open (another connection's, maybe in
// another project) keeps its directory however old and large: its shots
// are still to be delivered by path. Only closed traces make room.
func TestPruneKeepsOpenTraces(t *testing.T) {
	projects := t.TempDir()
	base := time.Now()
	for _, d := range []struct {
		project, trace string
		age            time.Duration
	}{{"a-1", "old-open", 9}, {"a-1", "old-closed", 8}, {"b-2", "new-closed", 2}, {"c-3", "current", 1}} {
		p := filepath.Join(projects, d.project, "traces", d.trace)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, "shot_1.png"), make([]byte, 40), 0o600)
		at := base.Add(-d.age * time.Minute)
		os.Chtimes(p, at, at)
	}
	pruneAllTraces(projects, map[string]bool{"current": true, "old-open": true}, 10, 100)
	for trace, want := range map[string]bool{"a-1/traces/old-open": true, "a-1/traces/old-closed": false, "b-2/traces/new-closed": false, "c-3/traces/current": true} {
		if _, err := os.Stat(filepath.Join(projects, trace)); (err == nil) != want {
			t.Errorf("%s: kept %v, want %v", trace, err == nil, want)
		}
	}
}
