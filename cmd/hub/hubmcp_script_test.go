package main

import (
	"fmt"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestHubMCPScripts drives `hub mcp` with scripted pages on every bridge
// (testdata/hubmcp_*.txtar): page tools by name, a client whose tool list
// is frozen calling through the generic tools, pairing from the agent.
func TestHubMCPScripts(t *testing.T) {
	p := scriptParams("testdata")
	for name, cmd := range map[string]func(*testscript.TestScript, bool, []string){
		"mcp-start":          cmdMCPStart,
		"mcp-init":           cmdMCPInit,
		"mcp-tools":          cmdMCPTools,
		"mcp-describe":       cmdMCPDescribe,
		"mcp-call":           cmdMCPCall,
		"mcp-note":           cmdMCPNote,
		"mcp-drop":           cmdMCPDrop,
		"mcp-stop":           cmdMCPStop,
		"sspage":             ssPage,
		"aiuiwait":           aiuiWait,
		"aiuipage":           aiuiPage,
		"pixelle-browser-at": cmdPixelleBrowserAt,
		"pixelle-code":       cmdPixelleCode,
	} {
		p.Cmds[name] = cmd
	}
	testscript.Run(t, p)
}

// mcp-describe NAME TOOL: tools/list, and TOOL's description.
func cmdMCPDescribe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mcp-describe NAME TOOL")
	}
	_, desc, err := faceOf(ts, args[0]).mcp.Tools(faceWait)
	ts.Check(err)
	d, ok := desc[args[1]]
	if !ok {
		ts.Fatalf("no tool %q listed", args[1])
	}
	fmt.Fprintln(ts.Stdout(), d)
}
