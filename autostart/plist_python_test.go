package autostart

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"
)

// TestPlistPythonReads has an independent property-list reader (Python's
// plistlib, which reads Apple's XML plists) read each LaunchAgent back:
// the program arguments and environment launchd would get are the ones
// meant, whatever the paths hold.
func TestPlistPythonReads(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	// One python3 for every plist: it starts slowly.
	var docs []string
	var want [][]string
	for _, p := range paths {
		argv := Entry{Exe: p, Config: p + ".yaml"}.Argv(LaunchAgent)
		env := []string{"PATH=" + launchAgentPath, "XDG_STATE_HOME=" + p}
		data, err := renderPlist(Label, argv, env)
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		docs = append(docs, string(data))
		want = append(want, argv)
	}
	in, _ := json.Marshal(docs)
	cmd := exec.Command(py, "-c", `import json, plistlib, sys
out = []
for doc in json.load(sys.stdin):
    d = plistlib.loads(doc.encode())
    out.append({"label": d["Label"], "argv": d["ProgramArguments"], "env": d.get("EnvironmentVariables", {}),
                "runAtLoad": d["RunAtLoad"], "keepAlive": d["KeepAlive"]})
json.dump(out, sys.stdout)`)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("plistlib: %v", err)
	}
	var got []struct {
		Label     string
		Argv      []string
		Env       map[string]string
		RunAtLoad bool
		KeepAlive bool
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(paths) {
		t.Fatalf("plistlib said %s (%v)", out, err)
	}
	for i, p := range paths {
		g := got[i]
		if g.Label != Label || !slices.Equal(g.Argv, want[i]) || g.Env["XDG_STATE_HOME"] != p ||
			g.Env["PATH"] != launchAgentPath || !g.RunAtLoad || g.KeepAlive {
			t.Errorf("%q: plistlib read %+v", p, g)
		}
	}
}
