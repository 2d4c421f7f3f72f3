package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hubdev/hub/supervisor"
)

// TestPlatDirsScripts runs testdata/platdirs: where the hub's files live,
// how clients without its environment find it, and a log that stays JSON
// lines whatever writes to it.
func TestPlatDirsScripts(t *testing.T) {
	p := scriptParams("testdata/platdirs")
	p.Cmds["jsonlines"] = cmdJSONLines
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		if err := setup(env); err != nil {
			return err
		}
		// Scripts that start a hub in a state dir of their own name it
		// ELSEWHERE; it must not outlive a failing script either.
		elsewhere := filepath.Join(env.WorkDir, "elsewhere")
		env.Setenv("ELSEWHERE", elsewhere)
		env.Defer(func() {
			dir := filepath.Join(elsewhere, "hub")
			if st, err := supervisor.ReadState(dir); err == nil && supervisor.VerifyHub(dir, st.PID) == nil {
				if p, err := os.FindProcess(st.PID); err == nil {
					p.Kill()
				}
			}
		})
		return nil
	}
	testscript.Run(t, p)
}

// jsonlines FILE [FIELD=VALUE...] requires every line of FILE to be a JSON
// object and, for each FIELD=VALUE, some line whose FIELD (a string)
// contains VALUE.
func cmdJSONLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: jsonlines FILE [FIELD=VALUE...]")
	}
	f, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	defer f.Close()
	var recs []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for n := 1; sc.Scan(); n++ {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			ts.Fatalf("%s line %d is not a JSON object: %q", args[0], n, sc.Text())
		}
		recs = append(recs, m)
	}
	ts.Check(sc.Err())
	if len(recs) == 0 {
		ts.Fatalf("%s is empty", args[0])
	}
	for _, want := range args[1:] {
		k, v, _ := strings.Cut(want, "=")
		found := false
		for _, m := range recs {
			if s, ok := m[k].(string); ok && strings.Contains(s, v) {
				found = true
				break
			}
		}
		if !found {
			ts.Fatalf("%s: no record with %s containing %q", args[0], k, v)
		}
	}
}
