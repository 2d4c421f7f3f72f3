package pixelle

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner/portownertest"
)

func TestMain(m *testing.M) {
	portownertest.Main() // a listener of another user's (keyedclient_test.go)
	os.Exit(m.Run())
}

// TestClientSendsNoCredentialToAnotherUser: the agent client aimed at a
// relay port the user nobody holds (our relay is gone from it, the pairing
// still names it) sends neither the agent token (the WebSocket hello) nor
// a pairing code (POST /api/pair): each fails, exit 3, with the refusal
// naming the holder, and the holder receives not a byte. It used to
// receive the WebSocket upgrade, and with a relay's answer the token;
// the pairing code in the request body.
func TestClientSendsNoCredentialToAnotherUser(t *testing.T) {
	sq := portownertest.Start(t, "127.0.0.1:0")
	relay := "http://127.0.0.1:" + strconv.Itoa(sq.Port)
	source := "the relay address " + relay
	cr := Credentials{SessionID: "leftover-session", Token: "leftover-agent-token", URL: relay}
	c := &Client{Relay: relay}
	ctx := context.Background()

	check := func(what string, err error) {
		t.Helper()
		var ce *ClientError
		if !errors.As(err, &ce) || ce.Code != "RELAY_NOT_YOURS" || hub.ExitCode(err) != hub.ExitNotRunning {
			t.Fatalf("%s = %#v, want RELAY_NOT_YOURS, exit %d", what, err, hub.ExitNotRunning)
		}
		sq.Refused(t, err, source)
	}
	_, err := c.Call(ctx, cr, json.RawMessage(`{"method":"state.read"}`))
	check("Call", err)
	_, err = c.Pair(ctx, "0123456789ab")
	check("Pair", err)

	// The bridge a hub or hub geturl serve drives with the stored pairing.
	d := adaptertest.TempDirs(t)
	if err := NewCredentialStore(d).Save(cr); err != nil {
		t.Fatal(err)
	}
	rb := NewRemoteBridge(d, relay)
	_, err = rb.BridgeCall(ctx, "state.read", json.RawMessage(`{}`))
	var te *adapters.ToolError
	if !errors.As(err, &te) || te.Code != adapters.CodeNotRunning {
		t.Fatalf("BridgeCall = %#v, want not running", err)
	}
	sq.Refused(t, err, source)
	_, err = rb.BridgeCall(ctx, toolPair, json.RawMessage(`{"code":"0123456789ab"}`))
	sq.Refused(t, err, source)
	sq.Untouched(t)
}
