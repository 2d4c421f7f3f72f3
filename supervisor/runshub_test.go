package supervisor

import "testing"

// A hub is undumpable, so `hub stop` and `hub status`, run by the same
// user, see no executable (exe "") but its argv: a hub started by `hub
// start` from a binary of another name must still be recognised, and a
// process that merely hides its executable must not be taken for one.
func TestRunsHub(t *testing.T) {
	const self = "/opt/tools/hub-dev"
	for _, tc := range []struct {
		name string
		exe  string
		argv []string
		want bool
	}{
		{"this executable, seen", self, []string{"anything"}, true},
		{"a hub run, seen", "/usr/bin/hub", []string{"hub", "run"}, true},
		{"another program, seen", "/usr/bin/flock", []string{"flock", "hub.lock", "sleep"}, false},
		{"another program named like us, seen", "/usr/bin/flock", []string{self, "x"}, false},
		{"hidden: hub start's child", "", []string{self, "run", "--detached"}, true},
		{"hidden: hub run typed by hand", "", []string{"hub", "run"}, true},
		{"hidden: this binary's name, relative", "", []string{"hub-dev", "run"}, true},
		{"hidden: not run", "", []string{self, "geturl", "serve"}, false},
		{"hidden: another name", "", []string{"/usr/bin/sleep", "run"}, false},
		{"hidden: no argv", "", nil, false},
		{"hidden, and our own path unknown", "", []string{"", "run"}, false},
	} {
		s := self
		if tc.name == "hidden, and our own path unknown" {
			s = ""
		}
		if got := runsHub(tc.exe, tc.argv, s); got != tc.want {
			t.Errorf("%s: runsHub(%q, %q) = %v, want %v", tc.name, tc.exe, tc.argv, got, tc.want)
		}
	}
}
