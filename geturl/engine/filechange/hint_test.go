package filechange

import (
	"testing"
	"time"
)

// fakeClock is an injected clock tests advance by hand.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) advance(d time.Duration) { c.now = c.now.Add(d) }

func TestEditTracker(t *testing.T) {
	type note struct {
		after time.Duration // since the previous note
		key   string
		want  bool
	}
	cases := []struct {
		name  string
		notes []note
	}{
		{"three distinct within the window", []note{{0, "a", false}, {10 * time.Second, "b", false}, {10 * time.Second, "c", true}}},
		{"fourth still suggests", []note{{0, "a", false}, {time.Second, "b", false}, {time.Second, "c", true}, {time.Second, "d", true}}},
		{"spread over more than the window", []note{{0, "a", false}, {20 * time.Second, "b", false}, {11 * time.Second, "c", false}}},
		{"exactly the window is outside it", []note{{0, "a", false}, {15 * time.Second, "b", false}, {15 * time.Second, "c", false}}},
		{"a repeat is one edit", []note{{0, "a", false}, {time.Second, "a", false}, {time.Second, "b", false}, {time.Second, "c", true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeClock{now: time.Unix(1000, 0)}
			tr := NewEditTracker(c.Now)
			for i, n := range tc.notes {
				c.advance(n.after)
				if got := tr.Note(n.key); got != n.want {
					t.Fatalf("note %d (%s): suggest = %v, want %v", i, n.key, got, n.want)
				}
			}
		})
	}
	var nilTracker *EditTracker
	if nilTracker.Note("x") {
		t.Fatal("nil tracker suggested")
	}
	nilTracker.Reset()
}
