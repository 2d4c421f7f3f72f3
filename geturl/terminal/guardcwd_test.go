package terminal

import "testing"

// A cd before rm changes what a relative path names: "cd / && rm -rf *" is
// "rm -rf /*". The guard follows the cd it can see.
func TestCatastrophicAfterCd(t *testing.T) {
	for _, tc := range []struct{ cmd, rule string }{
		{"cd / && rm -rf *", RuleRmRoot},
		{"cd /; rm -rf .", RuleRmRoot},
		{"cd / ; rm -rf ./*", RuleRmRoot},
		{"cd ~ && rm -rf *", RuleRmRoot},
		{"cd && rm -rf *", RuleRmRoot},
		{"cd $HOME && rm -rf .", RuleRmRoot},
		{"cd /usr && rm -rf *", RuleRmRoot},
		{"cd /usr/lib && rm -rf ..", RuleRmRoot},
		{"pushd / && rm -rf *", RuleRmRoot},
		{"cd / && chmod -R 000 .", RuleRecursiveChmod},
		{"cd / && find . -delete", RuleFindDeleteRoot},
		{"sh -c 'cd / && rm -rf *'", RuleRmRoot},
		{"echo b > /proc/sysrq-trigger", RulePower},
		{"echo o | sudo tee /proc/sysrq-trigger", RulePower},
		{"mkswap /dev/sda", RuleMkfs},
	} {
		r, bad := Catastrophic(tc.cmd)
		if !bad || r.Rule != tc.rule {
			t.Errorf("Catastrophic(%q) = %+v, %v; want rule %s", tc.cmd, r, bad, tc.rule)
		}
	}
	for _, cmd := range []string{
		"cd src && rm -rf *",
		"cd /tmp && rm -rf *",
		"cd /tmp/build && rm -rf ..",
		"cd ~/proj && rm -rf node_modules",
		"cd /home/me/proj && rm -rf dist",
		"cd / && ls && cd - && rm -rf *",
		"cd / && chmod -R 755 /tmp/x",
		"cat /proc/sysrq-trigger",
	} {
		if r, bad := Catastrophic(cmd); bad {
			t.Errorf("Catastrophic(%q) = %+v; want allowed", cmd, r)
		}
	}
}
