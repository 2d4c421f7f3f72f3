package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// TestFacesScripts drives the agent faces with the real binary over its
// stdio: `hub stitchslop` following the hub's bridge and taking over,
// and `hub mcp` serving every bridge of the hub: page tools by name, a
// client whose tool list is frozen calling through the generic tools,
// pairing from the agent.
func TestFacesScripts(t *testing.T) {
	p := scriptParams("testdata/faces")
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
		"sspage-close":       ssPageClose,
		"sspage-reconnect":   ssPageReconnect,
		"aiuiwait":           aiuiWait,
		"aiuipage":           aiuiPage,
		"aiuiprompt":         aiuiPrompt,
		"pixelle-browser-at": cmdPixelleBrowserAt,
		"pixelle-code":       cmdPixelleCode,
	} {
		p.Cmds[name] = cmd
	}
	testscript.Run(t, p)
}

// scriptFace is one face process a script talks MCP to.
type scriptFace struct {
	cmd    *exec.Cmd
	mcp    *adaptertest.MCPClient
	stderr *adaptertest.SyncBuffer
	exited chan struct{} // closed once the process has exited
	err    error         // its exit, once exited is closed
}

var (
	facesMu     sync.Mutex
	scriptFaces = map[*testscript.TestScript]map[string]*scriptFace{}
)

func faceOf(ts *testscript.TestScript, name string) *scriptFace {
	facesMu.Lock()
	defer facesMu.Unlock()
	f := scriptFaces[ts][name]
	if f == nil {
		ts.Fatalf("no face %q: run mcp-start first", name)
	}
	return f
}

// faceWait bounds one MCP exchange with a face; it only keeps a broken
// script from hanging.
const faceWait = 20 * time.Second

// mcp-start NAME ARGS...: run `hub ARGS...` in the script's directory and
// environment, speaking MCP over its stdin and stdout.
func cmdMCPStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: mcp-start NAME ARGS...")
	}
	bin := ""
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if fi, err := os.Stat(filepath.Join(dir, "hub")); err == nil && !fi.IsDir() {
			bin = filepath.Join(dir, "hub")
			break
		}
	}
	if bin == "" {
		ts.Fatalf("mcp-start: no hub on the script's PATH")
	}
	cmd := exec.Command(bin, args[1:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = os.Environ()
	for _, k := range []string{"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "NO_COLOR", "STITCHSLOP_TOKEN"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	stdin, err := cmd.StdinPipe()
	ts.Check(err)
	stdout, err := cmd.StdoutPipe()
	ts.Check(err)
	f := &scriptFace{cmd: cmd, stderr: &adaptertest.SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = f.stderr
	ts.Check(cmd.Start())
	f.mcp = adaptertest.NewMCPClient(stdin, stdout)
	go func() {
		<-f.mcp.Done()
		f.err = cmd.Wait()
		close(f.exited)
	}()
	ts.Defer(func() {
		f.mcp.Close()
		select {
		case <-f.exited:
		case <-time.After(faceWait):
			cmd.Process.Kill()
		}
	})
	facesMu.Lock()
	if scriptFaces[ts] == nil {
		scriptFaces[ts] = map[string]*scriptFace{}
	}
	scriptFaces[ts][args[0]] = f
	facesMu.Unlock()
}

// mcp-init NAME: the initialize handshake; prints the server's name.
func cmdMCPInit(ts *testscript.TestScript, neg bool, args []string) {
	f := faceOf(ts, args[0])
	res, err := f.mcp.Initialize("2025-06-18", faceWait)
	if err != nil {
		ts.Fatalf("initialize: %v\nstderr:\n%s", err, f.stderr)
	}
	info, _ := res["serverInfo"].(map[string]any)
	fmt.Fprintf(ts.Stdout(), "server %v\n", info["name"])
}

// mcp-tools NAME: tools/list, one name per line.
func cmdMCPTools(ts *testscript.TestScript, neg bool, args []string) {
	f := faceOf(ts, args[0])
	names, _, err := f.mcp.Tools(faceWait)
	ts.Check(err)
	for _, n := range names {
		fmt.Fprintln(ts.Stdout(), n)
	}
}

// mcp-call NAME TOOL [JSON-ARGS]: tools/call; prints each content block (a
// text block's text, an image block's type and size) and fails on
// isError unless negated.
func cmdMCPCall(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: mcp-call NAME TOOL [JSON-ARGS]")
	}
	f := faceOf(ts, args[0])
	var callArgs map[string]any
	if len(args) == 3 {
		ts.Check(json.Unmarshal([]byte(args[2]), &callArgs))
	}
	res, err := f.mcp.Tool(args[1], callArgs, faceWait)
	ts.Check(err)
	for _, b := range res.Content {
		switch b["type"] {
		case "text":
			fmt.Fprintln(ts.Stdout(), b["text"])
		default:
			data, _ := b["data"].(string)
			fmt.Fprintf(ts.Stdout(), "[%v %v %d base64 bytes]\n", b["type"], b["mimeType"], len(data))
		}
	}
	if res.IsError != neg {
		ts.Fatalf("%s: isError = %v", args[1], res.IsError)
	}
}

// mcp-note NAME METHOD: wait for a notification; prints its params.
func cmdMCPNote(ts *testscript.TestScript, neg bool, args []string) {
	f := faceOf(ts, args[0])
	m, err := f.mcp.Note(args[1], faceWait)
	if err != nil {
		ts.Fatalf("%v\nstderr:\n%s", err, f.stderr)
	}
	b, _ := json.Marshal(m["params"])
	fmt.Fprintf(ts.Stdout(), "%s\n", b)
}

// mcp-drop NAME: forget the notifications so far.
func cmdMCPDrop(ts *testscript.TestScript, neg bool, args []string) {
	faceOf(ts, args[0]).mcp.DropNotes()
}

// mcp-stop NAME: close the face's stdin (the agent went away); it must
// exit 0 having written nothing but JSON-RPC to stdout. Its stderr is
// printed to the script's stderr.
func cmdMCPStop(ts *testscript.TestScript, neg bool, args []string) {
	f := faceOf(ts, args[0])
	f.mcp.Close()
	select {
	case <-f.exited:
		fmt.Fprint(ts.Stderr(), f.stderr.String())
		if f.err != nil {
			ts.Fatalf("the face exited with %v", f.err)
		}
	case <-time.After(faceWait):
		ts.Fatalf("the face did not exit after its stdin closed\nstderr:\n%s", f.stderr)
	}
	ts.Check(f.mcp.CheckOutput())
}

// sspage-close: the last scripted Stitch Slop page detaches.
func ssPageClose(ts *testscript.TestScript, neg bool, args []string) {
	p := lastPage(ts)
	p.c.Close()
}

// sspage-reconnect PORT ORIGIN: the last page comes back with the pairing
// secret it was given, as the tab does, retrying until a bridge on PORT
// takes it; then it serves again.
func ssPageReconnect(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sspage-reconnect PORT ORIGIN")
	}
	p := lastPage(ts)
	deadline := time.Now().Add(faceWait)
	for {
		c, err := adaptertest.Dial("ws://127.0.0.1:"+args[0]+"/", adaptertest.DialOptions{Origin: args[1]})
		if err == nil {
			hs, _ := json.Marshal(map[string]string{"secret": p.secret})
			c.SendText(string(hs))
			if m, err := c.Next(5 * time.Second); err == nil && bytes.Contains(m.Data, []byte(`"hello"`)) {
				ts.Defer(c.Close)
				servePage(ts, c, args[0], p.secret)
				fmt.Fprintln(ts.Stdout(), "page reattached")
				return
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			ts.Fatalf("sspage-reconnect: no bridge on port %s took the page (last error: %v)", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pixelle-browser-at RELAY: a scripted Pixelle page on a relay the script
// did not start (the hub's), for pixelle-code and `hub pixelle pair`.
func cmdPixelleBrowserAt(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: pixelle-browser-at RELAY")
	}
	r := &scriptRelay{relay: args[0]}
	r.browser = startScriptBrowser(ts, r.relay)
	ts.Defer(r.browser.close)
	scriptMu.Lock()
	scriptRelays[ts] = r
	scriptMu.Unlock()
}
