package mcpserver

import (
	"context"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkClient is an SDK client on the other end of an in-memory transport,
// counting the list_changed notifications it receives.
type sdkClient struct {
	*mcp.ClientSession
	changed chan struct{}
}

func connectSDK(t *testing.T, s *Server, version string) *sdkClient {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Serve(ctx, st)
	}()
	changed := make(chan struct{}, 64)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return &sdkClient{ClientSession: cs, changed: changed}
}

func (c *sdkClient) toolNames(t *testing.T) []string {
	t.Helper()
	res, err := c.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func yield() { runtime.Gosched() }
