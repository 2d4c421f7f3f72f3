package main

import (
	"fmt"

	"github.com/rogpeppe/go-internal/testscript"
)

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
