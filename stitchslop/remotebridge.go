package stitchslop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hubdev/hub/adapters"
)

// RemoteBridge is a bridge another process runs, as an
// adapters.ToolBridge: the same tools, classification and answers as the
// in-process one, through its keyed control plane (GET /tools, POST
// /call). The hub's adapter uses one while it follows a bridge started
// outside the hub, and `hub geturl serve` one for the hub's bridge, so
// geturl's plugin=stitchslop drives the tab whichever process holds it.
type RemoteBridge struct {
	dir  string
	port int

	mu sync.Mutex
	r  *Remote // opened on first use, and again after it is gone
}

var _ adapters.ToolBridge = (*RemoteBridge)(nil)

// NewRemoteBridge drives the bridge on port whose session file is in
// configDir.
func NewRemoteBridge(configDir string, port int) *RemoteBridge {
	return &RemoteBridge{dir: configDir, port: port}
}

// remoteListTimeout bounds GET /tools for the methods that take no
// context.
const remoteListTimeout = 10 * time.Second

// remote is the open Remote, opened now when there is none.
func (b *RemoteBridge) remote(ctx context.Context) (*Remote, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.r == nil {
		r, err := OpenRemote(ctx, b.dir, b.port)
		if err != nil {
			return nil, adapters.NotRunning(fmt.Sprintf("the Stitch Slop bridge on port %d does not answer: %v", b.port, err))
		}
		b.r = r
	}
	return b.r, nil
}

// forget drops r after it failed as gone: the next use opens the session
// file again (the bridge may have restarted with a new key).
func (b *RemoteBridge) forget(r *Remote) {
	b.mu.Lock()
	if b.r == r {
		b.r = nil
	}
	b.mu.Unlock()
	r.Close()
}

// Close lets the connections go.
func (b *RemoteBridge) Close() {
	b.mu.Lock()
	r := b.r
	b.r = nil
	b.mu.Unlock()
	if r != nil {
		r.Close()
	}
}

// tools is the tab's tool list, asking again once through a freshly
// opened Remote when the open one is gone.
func (b *RemoteBridge) tools() ([]PageTool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), remoteListTimeout)
	defer cancel()
	for try := 0; ; try++ {
		r, err := b.remote(ctx)
		if err != nil {
			return nil, err
		}
		tools, err := r.Tools(ctx)
		switch {
		case errors.Is(err, ErrNoPage):
			return nil, noPage(b.port)
		case errors.Is(err, ErrBridgeGone) && try == 0:
			b.forget(r)
			continue
		case err != nil:
			b.forget(r)
			return nil, adapters.NotRunning(err.Error())
		}
		return tools, nil
	}
}

// BridgeTools implements adapters.ToolBridge.
func (b *RemoteBridge) BridgeTools() ([]adapters.BridgeTool, error) {
	tools, err := b.tools()
	if err != nil {
		return nil, err
	}
	return asBridgeTools(tools), nil
}

// BridgeClassify implements adapters.ToolBridge.
func (b *RemoteBridge) BridgeClassify(tool string, args json.RawMessage) (bool, error) {
	tools, err := b.tools()
	if err != nil {
		return false, err
	}
	return classify(tools, tool, args)
}

// BridgeCall implements adapters.ToolBridge. A bridge that cannot be
// reached, or refuses the key, never got the call: it is not running. One
// lost once the call was sent leaves its fate unknown, like the bridge's
// own "uncertain".
func (b *RemoteBridge) BridgeCall(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	r, err := b.remote(ctx)
	if err != nil {
		return nil, err
	}
	out, err := r.Call(ctx, tool, args)
	if errors.Is(err, ErrBridgeGone) && unsent(err) {
		// stopped, or restarted with a new key: nothing ran; once more
		// with the session file as it is now
		b.forget(r)
		if r, err = b.remote(ctx); err != nil {
			return nil, err
		}
		out, err = r.Call(ctx, tool, args)
		if errors.Is(err, ErrBridgeGone) && unsent(err) {
			b.forget(r)
			return nil, adapters.NotRunning(err.Error())
		}
	}
	switch {
	case errors.Is(err, ErrNoPage):
		return nil, noPage(b.port)
	case errors.Is(err, ErrBridgeGone), ctx.Err() != nil:
		b.forget(r)
		return nil, &adapters.ToolError{Code: "uncertain", Retryable: true, Hint: hintUncertain,
			Message: "the call may or may not have reached the tab: " + err.Error()}
	case err != nil: // the bridge refused the request (bad arguments)
		return nil, &adapters.ToolError{Code: "invalid_arguments", Message: err.Error()}
	}
	return envelopeAnswer(out)
}

// followed is the bridge this hub adapter follows, while it follows one
// started outside the hub; nil while it serves its own.
func (s *Server) followed() *RemoteBridge {
	if o := s.following.Load(); o != nil {
		return o.bridge
	}
	return nil
}
