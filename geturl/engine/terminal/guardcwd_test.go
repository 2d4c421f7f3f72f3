//go:build linux

package terminal

import (
	"strings"
	"testing"
)

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

// From a known starting directory, ".." can climb to /.
func TestCatastrophicClimbFromStart(t *testing.T) {
	const start = "/srv/work/proj"
	for _, cmd := range []string{
		"rm -rf ../../..", "rm -rf ../../../", "rm -rf ../../../*", "rm -rf ../../../../../../..",
		"rm -rf ../..", // /srv
		"cd ../../.. && rm -rf *", "chmod -R 000 ../../..", "find ../../.. -delete",
	} {
		if _, bad := CatastrophicIn(cmd, start); !bad {
			t.Errorf("CatastrophicIn(%q, %q) allowed", cmd, start)
		}
		if _, bad := Catastrophic(cmd); bad { // without a start it cannot know
			t.Errorf("Catastrophic(%q) refused without a start", cmd)
		}
	}
	for _, cmd := range []string{"rm -rf ..", "rm -rf ../sibling", "rm -rf *", "rm -rf .", "rm -rf build ../proj/dist"} {
		if r, bad := CatastrophicIn(cmd, start); bad {
			t.Errorf("CatastrophicIn(%q, %q) = %+v; want allowed", cmd, start, r)
		}
	}
}

// The runner judges a command from its real starting directory. Only
// prepare is called: nothing here can run a command.
func TestPrepareRefusesClimbToRoot(t *testing.T) {
	f := newFixture(t, Config{})
	climb := strings.Repeat("../", 64)
	_, te := f.r.prepare(Request{Command: "rm -rf " + climb})
	if te == nil || te.Code != CodeCatastrophic || te.Refusal == nil || te.Refusal.Rule != RuleRmRoot {
		t.Fatalf("prepare = %+v; want %s", te, CodeCatastrophic)
	}
	if _, te := f.r.prepare(Request{Command: "rm -rf ../x"}); te != nil {
		t.Fatalf("a sibling of the project refused: %+v", te)
	}
}
