package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/hub"
)

type aiuiTee struct {
	mcp.Connection
	notes chan *jsonrpc.Request
}

func (c *aiuiTee) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); ok && !r.IsCall() {
		select {
		case c.notes <- r:
		default:
		}
	}
	return m, err
}

type aiuiTeeTransport struct {
	inner mcp.Transport
	notes chan *jsonrpc.Request
}

func (t *aiuiTeeTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	return &aiuiTee{Connection: c, notes: t.notes}, err
}

// TestAiuiMCPOverRealStdio spawns the real `hub aiui mcp`, speaks MCP over
// its stdio, drives a page over real sockets, and checks that stdout
// carries only JSON-RPC: once with no backend running (it starts one
// in-process) and once attached to a running `hub aiui serve`.
func TestAiuiMCPOverRealStdio(t *testing.T) {
	t.Run("in-process", func(t *testing.T) { testAiuiMCPStdio(t, false) })
	t.Run("attached-to-serve", func(t *testing.T) { testAiuiMCPStdio(t, true) })
}

func testAiuiMCPStdio(t *testing.T, withServe bool) {
	hubPath, err := exec.LookPath("hub")
	if err != nil {
		t.Skip("hub not on PATH (testscript.Main sets it up)")
	}
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".state"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "NO_COLOR=1")
	backendPID, wantKind := 0, "mcp"
	if withServe {
		serve := exec.Command(hubPath, "aiui", "serve", "--port", "0")
		serve.Env = env
		if err := serve.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { serve.Process.Signal(os.Interrupt); serve.Wait() }()
		backendPID, wantKind = serve.Process.Pid, "serve"
		ctl := filepath.Join(home, ".state", "hub", "aiui", "control.json")
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(ctl); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("hub aiui serve did not come up")
			}
		}
	}
	cmd := exec.Command(hubPath, "aiui", "mcp")
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr adaptertest.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		t.Logf("hub aiui mcp stderr:\n%s", stderr.String())
	}()

	pr, pw := io.Pipe()
	var bad []string
	var bmu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil || m["jsonrpc"] != "2.0" {
				bmu.Lock()
				bad = append(bad, sc.Text())
				bmu.Unlock()
			}
			pw.Write(append(sc.Bytes(), '\n'))
		}
		pw.Close()
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	notes := make(chan *jsonrpc.Request, 64)
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &aiuiTeeTransport{inner: &mcp.IOTransport{Reader: pr, Writer: stdin}, notes: notes},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cs.InitializeResult().Capabilities.Experimental["claude/channel"]; !ok {
		t.Fatal("no experimental claude/channel capability")
	}

	// the backend's registry file: the in-process one's, or serve's
	if backendPID == 0 {
		backendPID = cmd.Process.Pid
	}
	reg := filepath.Join(aiui.RegistryDir(hub.Dirs{Home: home, Cache: filepath.Join(home, ".cache")}), fmt.Sprintf("%d.json", backendPID))
	var entry aiui.RegistryEntry
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(reg)
		if err == nil && json.Unmarshal(b, &entry) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no registry file %s", reg)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if entry.Kind != wantKind || entry.Port == 0 || entry.Schema != 1 {
		t.Fatalf("registry entry %+v", entry)
	}
	base := fmt.Sprintf("ws://127.0.0.1:%d", entry.Port)

	// a page registers a tool; the agent calls it through MCP
	page, err := adaptertest.Dial(base+"/tools", adaptertest.DialOptions{Origin: "http://localhost:5173"})
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	page.SendText(`{"v":1,"type":"register","ns":"morpho","hash":"h1","tools":[{"name":"zoom","description":"zoom"}]}`)
	go func() {
		for {
			m, err := page.Next(time.Minute)
			if err != nil {
				return
			}
			var call map[string]any
			json.Unmarshal(m.Data, &call)
			if call["type"] == "call" {
				page.SendText(fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":true,"value":"zoomed"}`, call["callId"]))
			}
		}
	}()
	var res *mcp.CallToolResult
	for time.Now().Before(deadline.Add(10 * time.Second)) {
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "page_tools_call", Arguments: map[string]any{"name": "zoom"}})
		if err == nil && !res.IsError {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != `"zoomed"` {
		t.Fatalf("page_tools_call: %v %+v", err, res)
	}

	// a prompt over /ws arrives as a channel notification
	ws, err := adaptertest.Dial(base+"/ws", adaptertest.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	hello, _ := frame.Encode(frame.Envelope{V: 1, Kind: "hello", Format: "text-concat"}, nil)
	data, _ := frame.Encode(frame.Envelope{V: 1, Kind: "data", ThreadID: "x", Fin: true}, []byte(`{"text":"over stdio"}`))
	ws.SendBinary(hello)
	ws.SendBinary(data)
	for {
		select {
		case n := <-notes:
			if n.Method != aiui.MethodChannel {
				continue
			}
			var p struct {
				Content string            `json:"content"`
				Meta    map[string]string `json:"meta"`
			}
			json.Unmarshal(n.Params, &p)
			if p.Meta["kind"] != "prompt" {
				continue
			}
			if p.Content != "over stdio" {
				t.Fatalf("notification = %s", n.Params)
			}
		case <-ctx.Done():
			t.Fatal("no channel notification")
		}
		break
	}

	cs.Close()
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Fatal("hub aiui mcp did not exit when stdin closed")
	}
	if _, err := os.Stat(reg); (err == nil) != withServe {
		t.Fatalf("registry file after the face exited: %v (serve still running: %v)", err, withServe)
	}
	bmu.Lock()
	defer bmu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("non-JSON-RPC on stdout: %q", bad)
	}
}
