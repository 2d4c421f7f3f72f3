package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// TestStitchslopScripts drives `hub stitchslop` (bridge and shell client,
// standalone and under the supervisor) end to end with testscript.
func TestStitchslopScripts(t *testing.T) {
	p := scriptParams("testdata/stitchslop")
	p.Cmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"ssexits":  ssExits,
		"ssport":   ssPort,
		"ssexpand": ssExpand,
		"sswait":   ssWait,
		"sspage":   ssPage,
	}
	testscript.Run(t, p)
}

// ssexits CODE PROG ARGS... requires that exact exit status.
func ssExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: ssexits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("ssexits: bad code %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("ssexits: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// ssport VAR stores a free loopback port in $VAR.
func ssPort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: ssport VAR")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	ts.Check(err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ts.Setenv(args[0], strconv.Itoa(port))
}

// ssexpand SRC DST copies SRC to DST expanding $VARs.
func ssExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: ssexpand SRC DST")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(os.Expand(ts.ReadFile(args[0]), ts.Getenv)), 0o600))
}

// sswait PORT waits until something listens on PORT.
func ssWait(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sswait PORT")
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.Dial("tcp4", "127.0.0.1:"+args[0])
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("nothing listens on %s", args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
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
