package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/stitchslop"
)

// TestStitchslopScripts drives `hub stitchslop` (bridge and shell client,
// standalone and under the supervisor) end to end with testscript.
func TestStitchslopScripts(t *testing.T) {
	p := scriptParams("testdata/stitchslop")
	p.Cmds["sspage"] = ssPage
	p.Cmds["waitbridge"] = waitBridge
	p.Cmds["sigbridge"] = sigBridge
	testscript.Run(t, p)
}

// ssSessionPath is the session file of the bridge on port in the default
// config dir under home.
func ssSessionPath(home, port string) string {
	return filepath.Join(hub.ExpandHome(stitchslop.DefaultConfigDir, home), "session-"+port+".json")
}

// waitbridge PORT waits until a bridge on PORT wrote its session file: the
// port accepts connections (the kernel's backlog) before the file exists,
// so waiting for the port alone races the client's lookup.
func waitBridge(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: waitbridge PORT")
	}
	path := ssSessionPath(ts.Getenv("HOME"), args[0])
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	ts.Fatalf("no session file %s", path)
}

// sigbridge HUP|TERM PORT sends a signal testscript's kill does not know
// to the bridge whose session file names PORT.
func sigBridge(ts *testscript.TestScript, neg bool, args []string) {
	sig, ok := scriptSignals[args[0]]
	if neg || len(args) != 2 || !ok || args[0] != "HUP" && args[0] != "TERM" {
		ts.Fatalf("usage: sigbridge HUP|TERM PORT")
	}
	b, err := os.ReadFile(ssSessionPath(ts.Getenv("HOME"), args[1]))
	ts.Check(err)
	var sess struct{ PID int }
	ts.Check(json.Unmarshal(b, &sess))
	ts.Check(signalPID(sess.PID, sig))
}

// sspage PORT ORIGIN TOKEN attaches a scripted Stitch Slop page for the rest
// of the script. It answers scene.describe (with a say line), render (with
// a PNG dataUrl), fail (ok:false) and echoes anything else. It keeps the
// pairing secret the bridge gives it, as the tab does (sspage-reconnect).
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
	secret, _ := hello["pairingSecret"].(string)
	servePage(ts, c, args[0], secret)
	fmt.Fprintln(ts.Stdout(), "page attached")
}

// scriptPage is the last page sspage attached in a script.
type scriptPage struct {
	c      *adaptertest.WSClient
	secret string
}

var (
	pagesMu     sync.Mutex
	scriptPages = map[*testscript.TestScript]*scriptPage{}
)

func lastPage(ts *testscript.TestScript) *scriptPage {
	pagesMu.Lock()
	defer pagesMu.Unlock()
	p := scriptPages[ts]
	if p == nil {
		ts.Fatalf("no page: run sspage first")
	}
	return p
}

// servePage sends the page's tools, answers its commands until the socket
// closes, and waits until the bridge on port lists the tools.
func servePage(ts *testscript.TestScript, c *adaptertest.WSClient, port, secret string) {
	pagesMu.Lock()
	scriptPages[ts] = &scriptPage{c: c, secret: secret}
	pagesMu.Unlock()
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
	// The next script line may list the tools: wait until the bridge has
	// processed the list (asking it over its control plane) rather than
	// sleeping and hoping.
	waitToolsListed(ts, port, 3)
}

// waitToolsListed polls GET /tools on the bridge at port, with the key from
// its session file in the default config dir, until it lists n tools.
func waitToolsListed(ts *testscript.TestScript, port string, n int) {
	path := ssSessionPath(ts.Getenv("HOME"), port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var sess struct {
			Key string `json:"key"`
		}
		b, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(b, &sess)
		}
		if err == nil {
			r, derr := adaptertest.Do("http://127.0.0.1:"+port+"/tools", adaptertest.Request{Header: http.Header{"x-stitchslop-key": {sess.Key}}})
			var got struct {
				Tools []any `json:"tools"`
			}
			if derr == nil && json.Unmarshal(r.Body, &got) == nil && len(got.Tools) == n {
				return
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("sspage: the bridge on port %s never listed the page's %d tools (session file: %v)", port, n, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
