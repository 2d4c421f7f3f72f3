package pixelle

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// RemoteBridge is a relay another process runs, as an
// adapters.ToolBridge: the same tools, checks and answers as the
// in-process one, driven as the agent client of §5.3 with the stored
// pairing (§4.4) that `hub pixelle call` and `hub mcp` use. Its pair tool
// stores the pairing it gets there, so all three drive the same canvas.
// The hub's adapter uses one while it reuses a relay started outside the
// hub, and `hub geturl serve` one for the hub's relay, so geturl's
// plugin=pixelle drives the canvas whichever process relays it.
//
// Without a stored pairing for this relay only pair is listed: whether a
// canvas is connected only an agent of its session can learn.
type RemoteBridge struct {
	dirs   hub.Dirs
	client *Client
}

var _ adapters.ToolBridge = (*RemoteBridge)(nil)

// NewRemoteBridge drives the relay at relay (http://127.0.0.1:PORT).
func NewRemoteBridge(d hub.Dirs, relay string) *RemoteBridge {
	return &RemoteBridge{dirs: d, client: &Client{Relay: relay}}
}

// remoteHealthTimeout bounds the /health that tells a running relay.
const remoteHealthTimeout = 5 * time.Second

// running checks that the relay answers.
func (b *RemoteBridge) running() error {
	ctx, cancel := context.WithTimeout(context.Background(), remoteHealthTimeout)
	defer cancel()
	if _, err := b.client.Health(ctx, ""); err != nil {
		return adapters.NotRunning("the Pixelle relay at " + b.client.Relay + " does not answer: " + err.Error())
	}
	return nil
}

// errRemoteNoPairing is NOT_PAIRED as an agent client knows it: it holds
// no pairing this relay accepts. Unlike the in-process bridge it cannot
// tell whether a canvas is connected, so it does not say one is.
var errRemoteNoPairing = &adapters.ToolError{Code: codeNotPaired, Retryable: true,
	Message: "no pairing with this relay's canvas is stored, or the relay no longer accepts it (paired anew, revoked, or the relay restarted)",
	Hint:    errNoPairing.Hint}

// pairing is the stored pairing with this relay, or NOT_PAIRED saying
// why there is none (a stored file refused as unsafe or damaged names
// itself and its fix).
func (b *RemoteBridge) pairing() (Credentials, error) {
	cr, err := NewCredentialStore(b.dirs).Load()
	switch {
	case errors.Is(err, errNotPaired):
		return Credentials{}, errRemoteNoPairing
	case err != nil:
		return Credentials{}, &adapters.ToolError{Code: codeNotPaired, Retryable: true, Message: err.Error(), Hint: errNoPairing.Hint}
	}
	if stored, _ := ParseRelayURL(cr.URL); stored != "" && stored != b.client.Relay {
		return Credentials{}, errRemoteNoPairing
	}
	return cr, nil
}

// BridgeTools implements adapters.ToolBridge: only pair until a pairing
// with this relay is stored, else every tool.
func (b *RemoteBridge) BridgeTools() ([]adapters.BridgeTool, error) {
	if err := b.running(); err != nil {
		return nil, err
	}
	if _, err := b.pairing(); err != nil {
		return bridgeTools[len(bridgeTools)-1:], nil
	}
	return slices.Clone(bridgeTools), nil
}

// BridgeClassify implements adapters.ToolBridge.
func (b *RemoteBridge) BridgeClassify(tool string, args json.RawMessage) (bool, error) {
	if tool == toolPair {
		_, err := pairArgs(args)
		return false, err
	}
	if _, err := b.pairing(); err != nil {
		return false, err
	}
	return readsOnly(tool, args)
}

// BridgeCall implements adapters.ToolBridge.
func (b *RemoteBridge) BridgeCall(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if tool == toolPair {
		code, err := pairArgs(args)
		if err != nil {
			return nil, err
		}
		cr, err := b.client.Pair(ctx, code)
		if err != nil {
			return nil, clientToolError(err)
		}
		if err := NewCredentialStore(b.dirs).Save(cr); err != nil {
			return nil, &adapters.ToolError{Code: "PAIR_FAILED", Message: "paired, but the pairing cannot be stored: " + err.Error()}
		}
		return json.Marshal(map[string]any{"paired": true, "relay": cr.URL})
	}
	cmd, _, err := commandFor(tool, args)
	if err != nil {
		return nil, err
	}
	cr, err := b.pairing()
	if err != nil {
		return nil, err
	}
	out, err := b.client.Call(ctx, cr, cmd)
	if err != nil {
		return nil, clientToolError(err)
	}
	if out.Error != nil {
		return nil, commandError(out.Error)
	}
	return out.Result, nil
}

// clientToolError is the agent client's failure as the bridge's: the
// relay not answering is a bridge not running; rejected credentials, no
// pairing; the rest keeps the client's code.
func clientToolError(err error) error {
	var ce *ClientError
	if !errors.As(err, &ce) {
		return &adapters.ToolError{Code: "OUTCOME_UNKNOWN", Message: err.Error(), Retryable: true, Hint: hintFor("OUTCOME_UNKNOWN")}
	}
	switch ce.Code {
	case "RELAY_UNREACHABLE", "RELAY_REFUSED", "RELAY_NOT_YOURS":
		return adapters.NotRunning(ce.Message)
	case "CREDENTIALS_REJECTED":
		return errRemoteNoPairing
	case "INVALID_OR_EXPIRED_CODE":
		return &adapters.ToolError{Code: ce.Code, Message: ce.Message, Hint: "ask the person for the code Pixelle shows now"}
	}
	return &adapters.ToolError{Code: ce.Code, Message: ce.Message, Hint: hintFor(ce.Code),
		Retryable: ce.Code != "PAIR_FAILED"}
}
