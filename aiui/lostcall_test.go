package aiui

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeBackend serves /control/call with answer and returns a client of it.
func fakeBackend(t *testing.T, answer http.HandlerFunc) *Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: answer}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return NewClient(ln.Addr().(*net.TCPAddr).Port, "k")
}

func pageToolsCallText(t *testing.T, cl *Client) (string, bool) {
	t.Helper()
	_, call := HubTools(func() (*Client, error) { return cl, nil })
	res, err := call(context.Background(), "page_tools_call", json.RawMessage(`{"name":"save"}`))
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// A call whose page left before answering, or whose backend went away
// once it had the call, may have run: page_tools_call must say so, with
// the code and what to do, not a bare message (or "no aiui backend is
// running", which reads as a call that never went anywhere).
func TestPageToolsCallSaysTheOutcomeIsUnknown(t *testing.T) {
	left := fakeBackend(t, func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(CallResult{Error: "page disconnected before answering (client c1)", ErrorKind: "tool", Code: "OUTCOME_UNKNOWN"})
	})
	text, isErr := pageToolsCallText(t, left)
	if !isErr || !strings.Contains(text, "OUTCOME_UNKNOWN") || !strings.Contains(text, "may or may not have run") {
		t.Fatalf("page left mid-call: %v %q", isErr, text)
	}

	died := fakeBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close() // the backend dies with the call in hand
		}
	})
	text, isErr = pageToolsCallText(t, died)
	if !isErr || !strings.Contains(text, "OUTCOME_UNKNOWN") || strings.HasPrefix(text, "no aiui backend is running") {
		t.Fatalf("backend died mid-call: %v %q", isErr, text)
	}

	// A page's own error stays the page's message, as it was.
	own := fakeBackend(t, func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(CallResult{Error: "no such layer", ErrorKind: "tool"})
	})
	if text, _ := pageToolsCallText(t, own); text != "no such layer" {
		t.Fatalf("page error: %q", text)
	}
}
