package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// TestStitchslopScripts drives `hub stitchslop` (bridge and shell client,
// standalone and under the supervisor) end to end with testscript.
func TestStitchslopScripts(t *testing.T) {
	p := scriptParams("testdata/stitchslop")
	p.Cmds["sspage"] = ssPage
	testscript.Run(t, p)
}

// sspage PORT ORIGIN TOKEN attaches a scripted Stitch Slop page for the rest
// of the script. It answers scene.describe (with a say line), render (with
// a PNG dataUrl), fail (ok:false) and echoes anything else.
func ssPage(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: sspage PORT ORIGIN TOKEN")
	}
	c, err := adaptertest.Dial("ws://127.0.0.1:"+args[0]+"/", adaptertest.DialOptions{Origin: args[1]})
	if err != nil {
		ts.Fatalf("sspage: dial: %v", err)
	}
	ts.Defer(c.Close)
	hs, _ := json.Marshal(map[string]string{"token": args[2]})
	c.SendText(string(hs))
	m, err := c.Next(5 * time.Second)
	if err != nil {
		ts.Fatalf("sspage: no hello: %v", err)
	}
	var hello map[string]any
	json.Unmarshal(m.Data, &hello)
	if hello["hello"] != "stitchslop-connector" {
		ts.Fatalf("sspage: refused: %s", m.Data)
	}
	c.SendText(`{"tools":[{"name":"scene.describe"},{"name":"render"},{"name":"fail"}]}`)
	png := base64.StdEncoding.EncodeToString([]byte("PNGDATA\n"))
	go func() {
		for {
			m, err := c.Next(time.Hour)
			if err != nil {
				return
			}
			var f map[string]any
			if json.Unmarshal(m.Data, &f) != nil || f["id"] == nil {
				continue
			}
			var reply map[string]any
			switch f["command"] {
			case "scene.describe":
				reply = map[string]any{"ok": true, "say": "Two objects on the hoop.", "objects": 2}
			case "render":
				reply = map[string]any{"ok": true, "dataUrl": "data:image/png;base64," + png}
			case "fail":
				reply = map[string]any{"ok": false, "error": "unknown_stitch", "message": "That stitch type does not exist."}
			default:
				reply = map[string]any{"ok": true, "command": f["command"], "args": f["args"]}
			}
			reply["id"] = f["id"]
			b, _ := json.Marshal(reply)
			c.SendText(string(b))
		}
	}()
	// The tool list is processed before the next script line drives calls.
	time.Sleep(50 * time.Millisecond)
	fmt.Fprintln(ts.Stdout(), "page attached")
}
