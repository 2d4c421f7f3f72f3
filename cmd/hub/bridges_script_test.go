package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestBridgeScripts drives, with the real binary, a hub's bridges through
// geturl's /k plugins: `hub start`, a scripted page, and an agent's GETs.
func TestBridgeScripts(t *testing.T) {
	p := scriptParams("testdata/bridges")
	p.Cmds["sspage"] = ssPage
	p.Cmds["geturlwait"] = geturlWait
	p.Cmds["agentget"] = agentGet
	testscript.Run(t, p)
}
