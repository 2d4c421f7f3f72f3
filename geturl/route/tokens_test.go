package route

import (
	"testing"

	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/engine/sandbox"
)

type tokSession struct{ tokens map[Capability]string }

func (s *tokSession) Scope() *sandbox.Scope     { return nil }
func (s *tokSession) Permissions() Permissions  { return Permissions{} }
func (s *tokSession) Replay() *replay.Store     { return nil }
func (s *tokSession) Coverage() Coverage        { return nil }
func (s *tokSession) Project() string           { return "p" }
func (s *tokSession) Token(c Capability) string { return s.tokens[c] }

// TestLookupComparesEveryToken: the lookup compares against every entry,
// in constant time, whether the token matches the first entry, the last or
// none — so its timing does not depend on which tokens exist.
func TestLookupComparesEveryToken(t *testing.T) {
	var table TokenTable
	var sessions []*tokSession
	for _, seed := range []string{"A", "B", "C"} {
		s := &tokSession{tokens: map[Capability]string{CapInit: seed + "Init001", CapRead: seed + "Read001", CapMutation: seed + "Mut0001"}}
		sessions = append(sessions, s)
		table.Add(s)
	}
	calls := 0
	orig := compare
	compare = func(a, b []byte) int { calls++; return orig(a, b) }
	defer func() { compare = orig }()
	for _, tok := range []string{sessions[0].Token(CapInit), sessions[2].Token(CapMutation), "AInit00X", "", "much-longer-than-eight"} {
		calls = 0
		_, _, ok := table.Lookup(tok)
		if calls != 9 {
			t.Fatalf("%q: %d comparisons, want 9", tok, calls)
		}
		if ok != (tok == sessions[0].Token(CapInit) || tok == sessions[2].Token(CapMutation)) {
			t.Fatalf("%q: found=%v", tok, ok)
		}
	}
	s, kind, ok := table.Lookup(sessions[2].Token(CapMutation))
	if !ok || kind != CapMutation || s != sessions[2] {
		t.Fatal("wrong session or kind")
	}
	table.Remove(sessions[2])
	if _, _, ok := table.Lookup(sessions[2].Token(CapRead)); ok {
		t.Fatal("a removed generation's token still resolves")
	}
}
