//go:build linux

package terminal

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestChildEnv(t *testing.T) {
	got := childEnv([]string{
		"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "TERM=xterm", "PWD=/srv/hub", "OLDPWD=/",
		"GITHUB_TOKEN=ghp_x", "DATABASE_URL=postgres://a:b@h/d", "EMPTY=", "=bad", "NOEQUALS",
	}, nil, "/real/project/src")
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "TERM=xterm", "EMPTY=", "PWD=/real/project/src"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestReaperEnvStripped: the command's parent is the reaper, whose
// environment any command can read (/proc/$PPID/environ): it must be the
// stripped one, without the secrets the new rules catch, and the walk
// must really have reached the reaper.
func TestReaperEnvStripped(t *testing.T) {
	f := newFixture(t, Config{Env: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/tester", "LANG=C.UTF-8",
		"BW_SESSION=secret1", "TS_AUTHKEY=secret2",
		"DB=Server=db;User Id=sa;Password=secret3;", "NOTIFY=https://hooks.slack.com/services/T0/B0/secret4",
		"CACHE=rediss://:secret5@cache:6380", "OPTS=-Dtls.trustStorePassword=secret6",
	}})
	res := f.run(Request{Command: `cat /proc/$PPID/comm; tr '\0' '\n' </proc/$PPID/environ`})
	if !strings.HasPrefix(res.Output, "hub-reaper\n") || !strings.Contains(res.Output, "\nHOME=/home/tester\n") {
		t.Fatalf("the reaper's environment was not read:\n%s", res.Output)
	}
	if strings.Contains(res.Output, "secret") {
		t.Fatalf("a secret in the reaper's environment:\n%s", res.Output)
	}
}
