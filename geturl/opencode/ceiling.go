package opencode

import "github.com/hubdev/hub/geturl/plugin"

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
//   - file edits: denied without geturl write;
//   - shell: denied without geturl terminal;
//   - git (through the shell): only with both write and terminal;
//   - nested task delegation: denied unless allowNested.
func Ceiling(auth plugin.Authority, allowNested bool) []Rule {
	deny := func(perm, pattern string) Rule { return Rule{Permission: perm, Pattern: pattern, Action: "deny"} }
	rules := []Rule{deny("external_directory", "*"), deny("swarm_*", "*")}
	if !auth.Write {
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
