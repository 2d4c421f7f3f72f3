package opencode

import (
	"slices"
	"testing"

	"github.com/hubdev/hub/geturl/plugin"
)

func TestCeiling(t *testing.T) {
	const (
		ext    = "external_directory *"
		swarm  = "swarm_* *"
		edit   = "edit *"
		patch  = "apply_patch *"
		bash   = "bash *"
		git    = "bash git *"
		nested = "task *"
	)
	for _, tc := range []struct {
		name            string
		write, term     bool
		nested          bool
		denied, allowed []string
	}{
		{"read only", false, false, false, []string{ext, swarm, edit, patch, bash, nested}, []string{git}},
		{"write only", true, false, false, []string{ext, swarm, bash, nested}, []string{edit, patch, git}},
		{"terminal only: shell but no git", false, true, false, []string{ext, swarm, edit, patch, git, nested}, []string{bash}},
		{"write and terminal: git too", true, true, false, []string{ext, swarm, nested}, []string{edit, patch, bash, git}},
		{"nested allowed", true, true, true, []string{ext, swarm}, []string{nested, bash, edit}},
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
		})
	}
}
