package aiui

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// TestFaceRevivesAfterOtherFacesBackendExits: a second `hub aiui mcp`
// attaches to the backend the first one started in-process. When the
// first exits, its backend goes with it; the second starts its own
// instead of staying without a channel, and prompts reach it again.
func TestFaceRevivesAfterOtherFacesBackendExits(t *testing.T) {
	home := t.TempDir()
	dirs := hub.Dirs{Home: home, Config: home + "/config", State: home + "/state", Cache: home + "/cache"}
	log := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// the first face's backend
	first := &inProcess{dirs: dirs, lc: hub.NewLifecycle(hub.IdleRules{}), log: log}
	a, err := first.start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.stop()

	// the second face, attached to it
	cl, err := Locate(ctx, dirs)
	if err != nil {
		t.Fatal(err)
	}
	own := &inProcess{dirs: dirs, lc: hub.NewLifecycle(hub.IdleRules{}), log: log}
	serverT, clientT := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	faceCtx, stopFace := context.WithCancel(ctx)
	go func() {
		done <- RunFace(faceCtx, serverT, cl, FaceOptions{CWD: "/repo", Log: log, Revive: own.revive})
	}()
	defer func() {
		stopFace()
		<-done
		own.stop()
	}()
	notes := make(chan *jsonrpc.Request, 64)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, &teeTransport{inner: clientT, ch: notes}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	adaptertest.WaitFor(t, "the second face to attach", func() bool { return a.infoFaces() == 1 })

	first.stop()
	var port int
	adaptertest.WaitFor(t, "a backend of the second face's own", func() bool {
		c, err := Locate(ctx, dirs)
		if err != nil || c.Base == a.Base {
			return false
		}
		port, _ = c.portAndFaces()
		return port != 0 && c.infoFaces() == 1
	})
	body := strings.NewReader(`{"text":"still here"}`)
	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/prompt", port), "application/json", body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if p := waitNote(t, notes, MethodChannel); p["content"] != "still here" {
		t.Fatalf("channel notification = %v", p)
	}
}

func (c *Client) portAndFaces() (int, int) {
	info, err := c.Info(context.Background())
	if err != nil {
		return 0, -1
	}
	p, _ := info["port"].(float64)
	f, _ := info["faces"].(float64)
	return int(p), int(f)
}
