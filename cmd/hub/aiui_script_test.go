package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/hub"
)

// TestAiuiScripts drives `hub aiui serve|prompts|tools|call` end to end.
func TestAiuiScripts(t *testing.T) {
	p := scriptParams("testdata/aiui")
	for name, cmd := range map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"aiuiwait":   aiuiWait,
		"aiuipage":   aiuiPage,
		"aiuiprompt": aiuiPrompt,
		"aiuinoreg":  aiuiNoRegistry,
		"aiuiinfo":   aiuiInfo,
	} {
		p.Cmds[name] = cmd
	}
	testscript.Run(t, p)
}

func aiuiDirs(ts *testscript.TestScript) hub.Dirs {
	home := ts.Getenv("HOME")
	return hub.Dirs{Home: home, State: filepath.Join(ts.Getenv("XDG_STATE_HOME"), "hub"), Cache: ts.Getenv("XDG_CACHE_HOME")}
}

// aiuiPort reads the backend's port from the registry file (the overlay's
// discovery path).
func aiuiPort(ts *testscript.TestScript) int {
	matches, _ := filepath.Glob(filepath.Join(aiui.RegistryDir(aiuiDirs(ts)), "*.json"))
	for _, m := range matches {
		var e aiui.RegistryEntry
		if b, err := os.ReadFile(m); err == nil && json.Unmarshal(b, &e) == nil && e.Port > 0 {
			return e.Port
		}
	}
	return 0
}

// aiuiwait waits for a backend's registry file and control file.
func aiuiWait(ts *testscript.TestScript, neg bool, args []string) {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(aiui.ControlPath(aiuiDirs(ts))); err == nil && aiuiPort(ts) > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("no aiui backend came up")
}

// aiuinoreg asserts that no registry file is left.
func aiuiNoRegistry(ts *testscript.TestScript, neg bool, args []string) {
	if p := aiuiPort(ts); p != 0 {
		ts.Fatalf("registry file still names port %d", p)
	}
}

// aiuipage NS TOOL attaches a fake page on /tools that declares TOOL in NS
// and answers every call with {"ns": NS, "args": <args>}.
func aiuiPage(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: aiuipage NS TOOL")
	}
	ns, tool := args[0], args[1]
	url := fmt.Sprintf("ws://127.0.0.1:%d/tools", aiuiPort(ts))
	c, err := adaptertest.Dial(url, adaptertest.DialOptions{Origin: "http://localhost:5173"})
	ts.Check(err)
	ts.Defer(c.Close)
	ts.Check(c.SendText(fmt.Sprintf(`{"v":1,"type":"register","ns":%q,"hash":"h-%s","url":"http://localhost:5173/%s","tools":[{"name":%q,"description":"a fake page tool"}]}`, ns, ns, ns, tool)))
	if m, err := c.Next(5 * time.Second); err != nil {
		ts.Fatalf("register: %v", err)
	} else if string(m.Data) == "" {
		ts.Fatalf("empty registered ack")
	}
	go func() {
		for {
			m, err := c.Next(time.Hour)
			if err != nil {
				return
			}
			var call struct {
				Type   string          `json:"type"`
				CallID string          `json:"callId"`
				Args   json.RawMessage `json:"args"`
			}
			if json.Unmarshal(m.Data, &call) == nil && call.Type == "call" {
				c.SendText(fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":true,"value":{"ns":%q,"args":%s}}`, call.CallID, ns, call.Args))
			}
		}
	}()
}

// aiuiprompt TEXT sends one text-concat thread over /ws.
func aiuiPrompt(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: aiuiprompt TEXT")
	}
	url := fmt.Sprintf("ws://127.0.0.1:%d/ws", aiuiPort(ts))
	c, err := adaptertest.Dial(url, adaptertest.DialOptions{})
	ts.Check(err)
	defer c.Close()
	hello, _ := frame.Encode(frame.Envelope{V: 1, Kind: "hello", Format: "text-concat"}, nil)
	payload, _ := json.Marshal(map[string]string{"text": args[0]})
	data, _ := frame.Encode(frame.Envelope{V: 1, Kind: "data", ThreadID: "script", Fin: true}, payload)
	for _, f := range [][]byte{hello, data} {
		ts.Check(c.SendBinary(f))
		m, err := c.Next(5 * time.Second)
		ts.Check(err)
		var r frame.Response
		json.Unmarshal(m.Data, &r)
		if !r.OK {
			ts.Fatalf("frame refused: %s", m.Data)
		}
	}
}

// aiuiinfo KEY VALUE waits until /debug/api/info reports KEY = VALUE.
func aiuiInfo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: aiuiinfo KEY VALUE")
	}
	deadline := time.Now().Add(15 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		r, err := adaptertest.Do(fmt.Sprintf("http://127.0.0.1:%d/debug/api/info", aiuiPort(ts)), adaptertest.Request{})
		if err == nil {
			var info map[string]any
			json.Unmarshal(r.Body, &info)
			last = fmt.Sprint(info[args[0]])
			if last == args[1] {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("info %s = %s, want %s", args[0], last, args[1])
}
