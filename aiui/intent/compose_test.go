package intent

import (
	"strings"
	"testing"
)

func ip(i int) *int { return &i }

func final(seg int, text string) Event {
	return Event{Type: TypeTranscriptFinal, Segment: seg, Text: StrPtr(text)}
}

func TestComposeCorrections(t *testing.T) {
	good := "*** Begin Patch\n*** Update File: transcript\n@@\n-a red cat\n+a blue cat\n*** End Patch"
	bad := "*** Begin Patch\n*** Update File: transcript\n@@\n-no such line\n+x\n*** End Patch"
	tests := []struct {
		name   string
		policy Policy
		corr   Event
		want   string
	}{
		{"patch applies", PolicyPatch, Event{Type: TypeCorrection, Patch: good, Original: "red", Instruction: "green", From: ip(2), To: ip(5)}, "a blue cat\nsecond"},
		{"bad patch falls back to range replace", PolicyPatch, Event{Type: TypeCorrection, Patch: bad, Original: "red", Instruction: "green", From: ip(2), To: ip(5)}, "a green cat\nsecond"},
		{"replace policy ignores patch", PolicyReplace, Event{Type: TypeCorrection, Patch: good, Original: "red", Instruction: "green", From: ip(2), To: ip(5)}, "a green cat\nsecond"},
		{"stale range falls back to search", PolicyPatch, Event{Type: TypeCorrection, Original: "second", Instruction: "2nd", From: ip(0), To: ip(3)}, "a red cat\n2nd"},
		{"ignore policy", PolicyIgnore, Event{Type: TypeCorrection, Original: "red", Instruction: "green"}, "a red cat\nsecond"},
		{"not found is noted", PolicyPatch, Event{Type: TypeCorrection, Original: "dog", Instruction: "cow"}, "a red cat\nsecond\n[correction \"dog\" → \"cow\" not applied: text not found]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compose([]Event{final(1, "a red cat"), final(2, "second"), tt.corr}, tt.policy)
			if got := c.Body(); got != tt.want {
				t.Fatalf("body = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestComposeDeltasDoNotCount(t *testing.T) {
	c := Compose([]Event{{Type: TypeTalkStart, Segment: 1}, {Type: TypeTranscriptDelta, Segment: 1, Text: StrPtr("partial")}}, PolicyPatch)
	if got := c.Body(); got != "[segment 1 has no final transcript]" {
		t.Fatalf("body = %q", got)
	}
}

func TestComposeDegradedFinalIsLoud(t *testing.T) {
	e := final(1, "")
	e.Note = "OPENAI_API_KEY is not set"
	c := Compose([]Event{e}, PolicyPatch)
	if got := c.Body(); !strings.Contains(got, "not transcribed: OPENAI_API_KEY is not set") {
		t.Fatalf("body = %q", got)
	}
}

func TestLowerCancelledAndEmpty(t *testing.T) {
	if _, ok := Lower(Compose([]Event{final(1, "x"), {Type: TypeThreadClose, Reason: "cancel"}}, PolicyPatch), ""); ok {
		t.Fatal("cancelled turn lowered to a prompt")
	}
	if _, ok := Lower(Compose(nil, PolicyPatch), ""); ok {
		t.Fatal("empty turn lowered to a prompt")
	}
}

func TestApplyPatch(t *testing.T) {
	tests := []struct {
		name, doc, patch, want string
		ok                     bool
	}{
		{"context hunk", "a\nb\nc", "*** Begin Patch\n*** Update File: transcript\n@@\n a\n-b\n+B\n c\n*** End Patch", "a\nB\nc", true},
		{"no header", "a", "@@\n-a\n+b", "", false},
		{"missing context", "a", "*** Begin Patch\n@@\n-z\n+b\n*** End Patch", "", false},
		{"bad line", "a", "*** Begin Patch\n@@\n?a\n*** End Patch", "", false},
		{"empty hunk", "a", "*** Begin Patch\n@@\n+x\n*** End Patch", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyPatch(tt.doc, tt.patch)
			if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
				t.Fatalf("ApplyPatch = %q, %v", got, err)
			}
		})
	}
}

func TestParsePolicy(t *testing.T) {
	if p, err := ParsePolicy(""); err != nil || p != PolicyPatch {
		t.Fatal("default policy is not patch")
	}
	if _, err := ParsePolicy("bogus"); err == nil {
		t.Fatal("bogus policy accepted")
	}
}
