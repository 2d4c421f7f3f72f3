package opencode

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/plugin"
)

func TestCeiling(t *testing.T) {
	const (
		ext    = "external_directory *"
		swarm  = "swarm_* *"
		edit   = "edit *"
		write  = "write *"
		patch  = "apply_patch *"
		bash   = "bash *"
		git    = "bash git *"
		nested = "task *"
		dotgit = "edit *.git/*"
	)
	for _, tc := range []struct {
		name            string
		write, term     bool
		nested          bool
		denied, allowed []string
	}{
		{"read only", false, false, false, []string{ext, swarm, edit, write, patch, bash, nested}, []string{git, dotgit}},
		// Write without terminal: OpenCode's edits bypass geturl's file
		// checks (symlinks, approvals), so no edits at all.
		{"write only: no edits either", true, false, false, []string{ext, swarm, edit, write, patch, bash, nested}, []string{git, dotgit}},
		{"terminal only: shell but no git", false, true, false, []string{ext, swarm, edit, write, patch, git, nested}, []string{bash, dotgit}},
		{"write and terminal: edits but not of .git", true, true, false, []string{ext, swarm, nested, dotgit}, []string{edit, write, patch, bash, git}},
		{"nested allowed", true, true, true, []string{ext, swarm, dotgit}, []string{nested, bash, edit}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules := Ceiling(plugin.Authority{Root: "/r", Write: tc.write, Terminal: tc.term}, tc.nested)
			var got []string
			for _, r := range rules {
				if r.Action != "deny" {
					t.Fatalf("ceiling holds a non-deny rule %+v: OpenCode appends session rules, so it could widen", r)
				}
				got = append(got, r.Permission+" "+r.Pattern)
			}
			for _, d := range tc.denied {
				if !slices.Contains(got, d) {
					t.Errorf("%q not denied in %v", d, got)
				}
			}
			for _, a := range tc.allowed {
				if slices.Contains(got, a) {
					t.Errorf("%q denied in %v", a, got)
				}
			}
			// What OpenCode decides: the edit tools are offered only with
			// write and terminal, and then never reach .git.
			offered := !deniedOutright(rules, "edit")
			if offered != (tc.write && tc.term) {
				t.Errorf("edit tools offered = %v", offered)
			}
			if offered && evaluate(rules, "edit", ".git/config") != "deny" {
				t.Errorf(".git/config editable under %v", got)
			}
		})
	}
}

// evaluate is OpenCode's Permission.evaluate over one ruleset: the last
// rule matching both permission and pattern decides; none means "ask".
func evaluate(rules []Rule, permission, pattern string) string {
	for i := len(rules) - 1; i >= 0; i-- {
		if wildcardMatch(permission, rules[i].Permission) && wildcardMatch(pattern, rules[i].Pattern) {
			return rules[i].Action
		}
	}
	return "ask"
}

func TestAppendable(t *testing.T) {
	full := Ceiling(plugin.Authority{Root: "/r", Write: true, Terminal: true}, false)
	writeOnly := Ceiling(plugin.Authority{Root: "/r", Write: true}, false)
	noEdit := slices.DeleteFunc(slices.Clone(full), func(r Rule) bool { return r.Permission == "edit" })
	paths := func(rs []Rule) (n int) {
		for _, r := range rs {
			if r.Pattern != "*" {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		name     string
		existing []Rule
		want     []Rule
	}{
		{"fresh session gets the whole ceiling", nil, full},
		{"a repeat of the same ceiling adds nothing", full, nil},
		{"after other rules it is appended again", append(slices.Clone(full), Rule{"bash", "rm *", "deny"}), full},
		{"an outright edit deny makes the path rules moot", writeOnly, noEdit},
		{"so does a deny of everything", groupRules, noEdit},
		{"and one from any earlier turn", append(slices.Clone(full), writeOnly...), noEdit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := appendable(tc.existing, full)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("appendable = %d rules (%d path rules), want %d (%d)", len(got), paths(got), len(tc.want), paths(tc.want))
			}
			// Appending never changes a decision the existing rules and the
			// whole ceiling would make, nor re-offers a denied tool.
			after, whole := append(slices.Clone(tc.existing), got...), append(slices.Clone(tc.existing), full...)
			for _, p := range []string{".git/config", "src/a.go", "a/.GIT/hooks/pre-commit"} {
				if a, w := evaluate(after, "edit", p), evaluate(whole, "edit", p); a != w {
					t.Errorf("%s: %s after appendable, %s after the whole ceiling", p, a, w)
				}
			}
			if deniedOutright(tc.existing, "edit") && !deniedOutright(after, "edit") {
				t.Error("the edit tools would be offered again")
			}
		})
	}
}

// Answers show a ceiling in short: the outright denials, and the path
// rules by what they cover.
func TestViewCeiling(t *testing.T) {
	v := viewCeiling(plugin.Authority{Root: "/r", Write: true, Terminal: true}, false)
	b, _ := json.Marshal(v)
	if len(b) > 1024 || len(v.DenyPaths) != 1 || v.DenyPaths[0].Patterns != len(vcsEditPatterns()) || v.Note != "" {
		t.Fatalf("full view (%d bytes) = %s", len(b), b)
	}
	w := viewCeiling(plugin.Authority{Root: "/r", Write: true}, false)
	b, _ = json.Marshal(w)
	if len(w.DenyPaths) != 0 || !strings.Contains(string(b), `"permission":"edit","pattern":"*"`) || !strings.Contains(w.Note, "write and terminal") {
		t.Fatalf("write-only view = %s", b)
	}
}

// A worker's rules grow only when its ceiling changes: OpenCode appends
// session rules on every update, and the widest ceiling holds hundreds of
// path rules, which every later listing of the session would carry.
func TestCeilingAppendedOncePerChange(t *testing.T) {
	root := t.TempDir()
	f := newFlakyOC(t, root)
	cfg := NewConfig()
	cfg.URL = f.URL
	p := New(cfg, Options{Owner: (&owner{err: errNoOwner}).get,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	full := plugin.Authority{Root: root, Write: true, Terminal: true}
	writeOnly := plugin.Authority{Root: root, Write: true}
	id := str(callOK(t, p, full, ToolWorker, `{"action":"start","prompt":"one"}`), "worker", "workerID")
	rules := func() []Rule {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, s := range f.sessions {
			if s["id"] == id {
				b, _ := json.Marshal(s["permission"])
				var rs []Rule
				_ = json.Unmarshal(b, &rs)
				return rs
			}
		}
		t.Fatal("worker not found")
		return nil
	}
	cont := func(auth plugin.Authority) {
		t.Helper()
		callOK(t, p, auth, ToolWorker, `{"action":"continue","workerID":"`+id+`","prompt":"again"}`)
	}
	fullRules := Ceiling(full, false)
	cont(full)
	cont(full)
	if got := rules(); !slices.Equal(got, fullRules) {
		t.Fatalf("after three turns of the same caller: %d rules, want the %d of one ceiling", len(got), len(fullRules))
	}
	cont(writeOnly)
	cont(full)
	cont(full)
	want := slices.Concat(fullRules, Ceiling(writeOnly, false), appendable(slices.Concat(fullRules, Ceiling(writeOnly, false)), fullRules))
	got := rules()
	if !slices.Equal(got, want) {
		t.Fatalf("after a narrower turn and two wide ones: %d rules, want %d", len(got), len(want))
	}
	// The narrower turn's outright edit deny still holds: OpenCode keeps
	// offering no edit tools, and .git stays denied.
	if !deniedOutright(got, "edit") || evaluate(got, "edit", ".git/config") != "deny" {
		t.Fatal("a wider caller's turn lifted the edit deny")
	}
}
