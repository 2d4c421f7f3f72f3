package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// A client that closes its end of our stdout has gone as surely as one
// that closes stdin: the session ends (Serve returns nil, the client
// announced) even though the input stays open, instead of reading on
// with every answer lost.
func TestServeEndsWhenOutputCloses(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer inW.Close()
	done := make(chan served, 1)
	go func() {
		a, err := testServer(Options{}).Serve(context.Background(), &LineTransport{In: inR, Out: outW})
		done <- served{a, err}
	}()
	br := bufio.NewReader(outR)
	io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`+"\n")
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	outR.Close() // the client stops reading
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	select {
	case r := <-done:
		if !r.announced || r.err != nil {
			t.Fatalf("Serve = %+v (%v), want announced and nil", r, r.err)
		}
	case <-time.After(recvLimit):
		t.Fatal("the session went on with its output closed")
	}
}

// The same through a real stdout, in a process of its own: a client that
// closes its end of the pipe must not kill the face with SIGPIPE (which
// skips every cleanup); Serve returns and the process exits 0.
func TestStdoutClosedIsNoSIGPIPE(t *testing.T) {
	if os.Getenv("MCPFACE_STDIO_CHILD") == "1" {
		return // the child's work is in TestMain (stdioChild)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStdoutClosedIsNoSIGPIPE$")
	cmd.Env = append(os.Environ(), "MCPFACE_STDIO_CHILD=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`+"\n")
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	stdout.Close()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	err = cmd.Wait() // stdin stays open: only the failed write can end it
	if err != nil {
		t.Fatalf("the face ended with %v (%v), want exit 0", err, cmd.ProcessState)
	}
}

// stdioChild serves MCP on the process's own stdio for
// TestStdoutClosedIsNoSIGPIPE, and exits 0 if Serve reports the client
// gone.
func stdioChild() {
	if os.Getenv("MCPFACE_STDIO_CHILD") != "1" {
		return
	}
	announced, err := testServer(Options{}).Serve(context.Background(), Stdio())
	if !announced || err != nil {
		fmt.Fprintln(os.Stderr, "Serve:", announced, err)
		os.Exit(2)
	}
	os.Exit(0)
}
