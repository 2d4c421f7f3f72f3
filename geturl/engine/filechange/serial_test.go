package filechange

import (
	"context"
	"testing"
	"time"
)

// TestSerialEditHint drives the hint through real edits: the third
// distinct edit within 30 s carries suggestedBulkPatch and the hint, a
// failed edit does not count, and a patch ends the streak.
func TestSerialEditHint(t *testing.T) {
	p := newProject(t, map[string]string{"a.txt": "one\ntwo\nthree\nfour\n"})
	ctx := context.Background()
	edit := func(old, new string) *EditResult {
		t.Helper()
		r, err := p.eng.Edit(ctx, "a.txt", old, new)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := edit("one", "1"); r.SuggestedBulkPatch {
		t.Fatal("first edit")
	}
	p.clock.advance(5 * time.Second)
	if _, err := p.eng.Edit(ctx, "a.txt", "nope", "x"); err == nil {
		t.Fatal("edit of absent text succeeded")
	}
	if r := edit("two", "2"); r.SuggestedBulkPatch {
		t.Fatal("second edit")
	}
	p.clock.advance(5 * time.Second)
	r := edit("three", "3")
	if !r.SuggestedBulkPatch || r.EfficiencyHint != EfficiencyHint {
		t.Fatalf("third edit: %+v", r)
	}
	if _, err := p.eng.ApplyPatch(ctx, "*** Begin Patch\n*** Update File: a.txt\n@@\n-four\n+4\n*** End Patch"); err != nil {
		t.Fatal(err)
	}
	if r := edit("1", "one"); r.SuggestedBulkPatch {
		t.Fatal("the streak survived a bulk patch")
	}
}
