package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestGeturlScripts drives `hub geturl serve|project|session` end to end.
func TestGeturlScripts(t *testing.T) {
	p := scriptParams("testdata/geturl")
	p.Cmds["geturlwait"] = geturlWait
	p.Cmds["agentget"] = agentGet
	p.Cmds["geturlkill"] = geturlKill
	testscript.Run(t, p)
}

func geturlControl(ts *testscript.TestScript) string {
	return filepath.Join(ts.Getenv("XDG_STATE_HOME"), "hub", "geturl", "control.json")
}

// geturlwait waits until a control plane wrote its control file.
func geturlWait(ts *testscript.TestScript, neg bool, args []string) {
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(geturlControl(ts)); err == nil {
			return
		}
	}
	ts.Fatalf("no geturl control file at %s", geturlControl(ts))
}

// agentget JSONFILE FIELD SUFFIX fetches, as a URL-reader agent would, the
// URL in FIELD of the JSON file plus SUFFIX (a field of "bases.r" style
// follows the Init answer), writing the body to stdout.
func agentGet(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: agentget JSONFILE FIELD SUFFIX")
	}
	var doc map[string]any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &doc))
	var v any = doc
	for _, k := range strings.Split(args[1], ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	u, _ := v.(string)
	if u == "" {
		ts.Fatalf("agentget: no %s in %s", args[1], args[0])
	}
	resp, err := http.Get(u + args[2])
	ts.Check(err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	ts.Stdout().Write(body)
	if (resp.StatusCode != 200) != neg {
		ts.Fatalf("agentget: HTTP %d: %s", resp.StatusCode, body)
	}
}

// geturlkill SIGKILLs the control plane named in the control file and
// waits for it to die, leaving the file behind as a real crash would.
func geturlKill(ts *testscript.TestScript, neg bool, args []string) {
	var cf struct{ PID int }
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(geturlControl(ts))), &cf))
	p, err := os.FindProcess(cf.PID)
	ts.Check(err)
	ts.Check(p.Kill())
	for deadline := time.Now().Add(10 * time.Second); hub.PIDAlive(cf.PID); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			ts.Fatalf("pid %d survived SIGKILL", cf.PID)
		}
	}
}
