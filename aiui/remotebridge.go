package aiui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub"
)

// RemoteBridge is the backend another process runs, found through the
// control file as `hub aiui call` finds it, as an adapters.ToolBridge: the
// same names, classification and answers as the in-process one, through
// the keyed control routes. The hub's adapter uses one while it follows a
// backend started outside the hub, and `hub geturl serve` one for the
// hub's, so geturl's plugin=aiui reaches the pages whichever process they
// are connected to.
//
// A name held by several pages is classified as the in-process bridge
// lists it (a read only when every holder's tool reads): which page the
// backend would pick is decided there, at the call.
type RemoteBridge struct {
	dirs hub.Dirs

	mu sync.Mutex
	cl *Client // located on first use, and again after it failed
}

var _ adapters.ToolBridge = (*RemoteBridge)(nil)

// NewRemoteBridge drives the backend the control file in d names.
func NewRemoteBridge(d hub.Dirs) *RemoteBridge { return &RemoteBridge{dirs: d} }

// remoteListTimeout bounds reading the directory for the methods that take
// no context.
const remoteListTimeout = 10 * time.Second

// client is the located backend, located now when there is none.
func (b *RemoteBridge) client(ctx context.Context) (*Client, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cl == nil {
		cl, err := Locate(ctx, b.dirs)
		if err != nil {
			return nil, adapters.NotRunning(err.Error())
		}
		b.cl = cl
	}
	return b.cl, nil
}

// forget drops cl after it failed: the next use reads the control file
// again.
func (b *RemoteBridge) forget(cl *Client) {
	b.mu.Lock()
	if b.cl == cl {
		b.cl = nil
	}
	b.mu.Unlock()
}

// directory is the backend's page-tool registrations, or the offline
// error while no page is connected.
func (b *RemoteBridge) directory() ([]tools.Registration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), remoteListTimeout)
	defer cancel()
	cl, err := b.client(ctx)
	if err != nil {
		return nil, err
	}
	var out struct {
		Registrations []tools.Registration `json:"registrations"`
		Clients       *int                 `json:"clients"`
	}
	if err := cl.do(ctx, http.MethodGet, "/control/tools", nil, &out); err != nil {
		b.forget(cl)
		return nil, adapters.NotRunning("the aiui backend does not answer: " + err.Error())
	}
	if out.Clients != nil && *out.Clients == 0 || out.Clients == nil && len(out.Registrations) == 0 {
		return nil, noPageErr(tools.NoPageMsg)
	}
	return out.Registrations, nil
}

// BridgeTools implements adapters.ToolBridge.
func (b *RemoteBridge) BridgeTools() ([]adapters.BridgeTool, error) {
	regs, err := b.directory()
	if err != nil {
		return nil, err
	}
	return listed(regs), nil
}

// BridgeClassify implements adapters.ToolBridge.
func (b *RemoteBridge) BridgeClassify(tool string, args json.RawMessage) (bool, error) {
	regs, err := b.directory()
	if err != nil {
		return false, err
	}
	if err := argsObject(args); err != nil {
		return false, err
	}
	_, rs := routes(regs)
	r, ok := rs[tool]
	if !ok {
		return false, unknownTool(tool)
	}
	return r.tool.Read, nil
}

// BridgeCall implements adapters.ToolBridge. A backend that cannot be
// reached, or refuses the request, never ran it: it is not running. One
// lost once the call was sent leaves its fate unknown.
func (b *RemoteBridge) BridgeCall(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	regs, err := b.directory()
	if err != nil {
		return nil, err
	}
	_, rs := routes(regs)
	r, ok := rs[tool]
	if !ok {
		return nil, &adapters.ToolError{Code: codeUnknownTool, Message: fmt.Sprintf("no page tool %q (any more)", tool)}
	}
	req := r.req
	req.Args = args
	cl, err := b.client(ctx)
	if err != nil {
		return nil, err
	}
	res, err := cl.Call(ctx, req)
	switch {
	case err != nil && unsent(err):
		b.forget(cl)
		return nil, adapters.NotRunning("the aiui backend did not take the call: " + err.Error())
	case err != nil:
		b.forget(cl)
		return nil, toolError(tools.OutcomeUnknown, "the call may or may not have reached the page: "+err.Error())
	case res.OK:
		return res.Value, nil
	case res.ErrorKind == "route":
		msg := res.RouteError
		if msg == "" {
			msg = res.Error
		}
		return nil, routeError(&tools.RouteError{Msg: msg, Candidates: res.Candidates}, req.Name)
	}
	return nil, toolError(res.Code, res.Error)
}

// followed is the backend this hub adapter follows, while it follows one
// started outside the hub; nil while it serves its own.
func (s *Server) followed() *RemoteBridge {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.outsideBridge
}
