package opencode

import (
	"slices"

	"github.com/hubdev/hub/geturl/plugin"
)

// Rule is one OpenCode permission rule. OpenCode evaluates the agent's
// rules followed by the session's and the last match wins, so deny rules
// on a session override any allow the agent has.
type Rule struct {
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
	Action     string `json:"action"`
}

// editPermissions are every OpenCode permission (and tool id) that writes
// project files: OpenCode maps write/patch/multiedit onto "edit", the
// others cover tools that bypass that mapping, refactor-style plugin
// tools included.
var editPermissions = []string{"edit", "write", "patch", "apply_patch", "multiedit", "refactor", "refactor_*"}

// Ceiling derives a worker's permission ceiling from the calling
// authority: deny rules only, since OpenCode appends session rules on
// update and a deny can never be taken back, so re-applying a ceiling
// only ever narrows.
//
//   - external directories and OpenSwarm swarm_* tools: always denied;
//   - file edits: only with both geturl write and terminal, and then
//     never of version-control metadata (vcsEditPatterns, on "edit", the
//     permission OpenCode's edit, write and apply_patch tools ask for);
//   - shell: denied without geturl terminal;
//   - git (through the shell): only with both write and terminal;
//   - nested task delegation: denied unless allowNested.
//
// Edits need the terminal too because OpenCode's edit tools bypass
// geturl's file checks and OpenCode 1.18 cannot make them: its rules match
// the path as a string, resolving no symlink; apply_patch asks about a
// move's source only; and an "always" approval of an edit, which any
// client may give, is kept for every session of the directory and weighed
// after session rules. Only a rule denying every path holds (OpenCode then
// does not even offer the tools). With the terminal the worker has the
// shell anyway; the metadata rules keep its file tools to geturl's rule.
func Ceiling(auth plugin.Authority, allowNested bool) []Rule {
	deny := func(perm, pattern string) Rule { return Rule{Permission: perm, Pattern: pattern, Action: "deny"} }
	rules := []Rule{deny("external_directory", "*"), deny("swarm_*", "*")}
	if auth.Write && auth.Terminal {
		for _, p := range vcsEditPatterns() {
			rules = append(rules, deny("edit", p))
		}
	} else {
		for _, p := range editPermissions {
			rules = append(rules, deny(p, "*"))
		}
	}
	switch {
	case !auth.Terminal:
		rules = append(rules, deny("bash", "*"))
	case !auth.Write:
		rules = append(rules, deny("bash", "git"), deny("bash", "git *"))
	}
	if !allowNested {
		rules = append(rules, deny("task", "*"))
	}
	return rules
}

// appendable returns the rules to append to a session whose rules are
// existing so that ceiling binds it: ceiling without the rules of a
// limited pattern for a permission existing already denies outright (they
// change no decision, and OpenCode offers a tool again once the last rule
// of its permission is not an outright deny), or nothing when existing
// already ends with exactly that. Skipping a repeat keeps a worker's rules
// from growing by hundreds each turn; only the caller with the widest
// ceiling may skip (see recordTurn).
func appendable(existing, ceiling []Rule) []Rule {
	out := make([]Rule, 0, len(ceiling))
	for _, r := range ceiling {
		if r.Pattern != "*" && deniedOutright(existing, r.Permission) {
			continue
		}
		out = append(out, r)
	}
	if len(existing) >= len(out) && slices.Equal(existing[len(existing)-len(out):], out) {
		return nil
	}
	return out
}

// deniedOutright reports whether the last of rules that applies to
// permission (a rule's permission is a wildcard, as OpenCode matches it)
// denies every pattern: whatever is appended after it, a deny cannot be
// lifted by further denies.
func deniedOutright(rules []Rule, permission string) bool {
	for i := len(rules) - 1; i >= 0; i-- {
		if wildcardMatch(permission, rules[i].Permission) {
			return rules[i].Pattern == "*" && rules[i].Action == "deny"
		}
	}
	return false
}

// ceilingView is how answers show a ceiling: the rules denying a
// permission outright, and the path rules by what they cover (there are
// hundreds of them).
type ceilingView struct {
	Deny      []Rule       `json:"deny"`
	DenyPaths []pathDenial `json:"denyPaths,omitempty"`
	Note      string       `json:"note,omitempty"`
}

type pathDenial struct {
	Permission string `json:"permission"`
	Covers     string `json:"covers"`
	Patterns   int    `json:"patterns"`
}

// viewCeiling summarises Ceiling(auth, allowNested) for an answer.
func viewCeiling(auth plugin.Authority, allowNested bool) ceilingView {
	vcs := map[string]bool{}
	for _, p := range vcsEditPatterns() {
		vcs[p] = true
	}
	v := ceilingView{Deny: []Rule{}}
	n := 0
	for _, r := range Ceiling(auth, allowNested) {
		if isVCSEditRule(r, vcs) {
			n++
			continue
		}
		v.Deny = append(v.Deny, r)
	}
	if n > 0 {
		v.DenyPaths = []pathDenial{{Permission: "edit", Patterns: n,
			Covers: "version-control metadata: .git, .hg, .svn, .jj, .bzr in every spelling a file system may take for them, at any depth"}}
	}
	if auth.Write && !auth.Terminal {
		v.Note = "workers edit files only for a session with both write and terminal: OpenCode's edit tools follow symlinks and bypass geturl's file checks; edit with geturl's own file tools"
	}
	return v
}
