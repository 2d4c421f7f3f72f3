package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// TestStitchslopMCPOverRealStdio spawns the real `hub stitchslop` CLI (the
// test binary doubling as hub, put on PATH by testscript.Main) and speaks
// MCP over its stdin/stdout while a page attaches over a real WebSocket.
// Every stdout line must be JSON-RPC: nothing else may write there (§3.1).
func TestStitchslopMCPOverRealStdio(t *testing.T) {
	hubPath, err := exec.LookPath("hub")
	if err != nil {
		t.Skip("hub not on PATH (testscript.Main sets it up)")
	}
	home := t.TempDir()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	const origin = "https://www.stitchslop.test"
	cmd := exec.Command(hubPath, "stitchslop", "--origin", origin, "--port", fmt.Sprint(port))
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".state"), "NO_COLOR=1", "STITCHSLOP_TOKEN=tok_stdio")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan map[string]any, 64)
	var mu sync.Mutex
	var nonProtocol []string
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
				mu.Lock()
				nonProtocol = append(nonProtocol, sc.Text())
				mu.Unlock()
				continue
			}
			lines <- m
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })

	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		t.Helper()
		select {
		case m := <-lines:
			return m
		case <-time.After(10 * time.Second):
			t.Fatalf("no JSON-RPC line; stderr:\n%s", stderr.String())
			return nil
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	init := recv()
	res := init["result"].(map[string]any)
	if res["protocolVersion"] != "2025-03-26" || res["serverInfo"].(map[string]any)["name"] != "stitchslop-connector" {
		t.Fatalf("initialize = %v", init)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := recv(); m["id"] != float64(2) || len(m["result"].(map[string]any)) != 0 {
		t.Fatalf("ping = %v", m)
	}

	// The page attaches over a real socket.
	var page *adaptertest.WSClient
	deadline := time.Now().Add(10 * time.Second)
	for {
		page, err = adaptertest.Dial(fmt.Sprintf("ws://127.0.0.1:%d/", port), adaptertest.DialOptions{Origin: origin})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cannot dial the bridge: %v\n%s", err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer page.Close()
	page.SendText(`{"token":"tok_stdio"}`)
	if m, err := page.Next(5 * time.Second); err != nil || !strings.Contains(m.Text(), `"pairingSecret"`) {
		t.Fatalf("hello: %v %s", err, m.Text())
	}
	if m := recv(); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("want list_changed on connect, got %v", m)
	}
	page.SendText(`{"tools":[{"name":"scene.describe","description":"the scene"}]}`)
	if m := recv(); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("want list_changed on the tool list, got %v", m)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"scene.describe","arguments":{"limit":2}}}`)
	frame, err := page.Next(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	json.Unmarshal(frame.Data, &f)
	if f["command"] != "scene.describe" || f["args"].(map[string]any)["limit"] != float64(2) {
		t.Fatalf("page frame %s", frame.Data)
	}
	page.SendText(fmt.Sprintf(`{"id":%v,"ok":true,"say":"Two objects.","objects":2}`, f["id"]))
	m := recv()
	content := m["result"].(map[string]any)["content"].([]any)
	if text := content[0].(map[string]any)["text"].(string); !strings.HasPrefix(text, "Two objects.\n") || strings.Contains(text, `"id"`) {
		t.Fatalf("tools/call result %v", m)
	}

	// stdin closes after initialize: the agent is gone, exit 0.
	stdin.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("bridge kept running after stdin closed\n%s", stderr.String())
	}
	// §2.1: port, origin and pid on stderr, for the human watching.
	for _, want := range []string{fmt.Sprint(port), origin, fmt.Sprintf("pid=%d", cmd.Process.Pid)} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), "pairing is kept") {
		t.Fatalf("stderr does not say the pairing is kept:\n%s", stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(nonProtocol) > 0 {
		t.Fatalf("stdout carried non-JSON-RPC lines: %q", nonProtocol)
	}
	if _, err := os.Stat(ssSessionPath(home, fmt.Sprint(port))); !os.IsNotExist(err) {
		t.Fatal("session file left after exit")
	}
}
