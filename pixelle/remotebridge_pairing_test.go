package pixelle

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// The remote bridge is an agent client: with no pairing the relay
// accepts it cannot know whether a canvas is connected, so its NOT_PAIRED
// does not claim one is; a stored pairing refused as unsafe says so and
// names the fix instead of passing for no pairing at all.
func TestRemoteBridgeNotPairedSaysWhy(t *testing.T) {
	r := startRelay(t, nil)
	relayURL := "http://" + hub.LoopbackHost + ":" + strconv.Itoa(r.Port())
	dirs := adaptertest.TempDirs(t)
	b := NewRemoteBridge(dirs, relayURL)
	_, err := b.BridgeCall(context.Background(), "state.read", json.RawMessage(`{}`))
	if te := toolErr(t, err); te.Code != codeNotPaired || strings.Contains(te.Message, "is connected") {
		t.Fatalf("no pairing stored, no canvas: %+v", te)
	}
	// a pairing the relay does not know (it restarted)
	store := NewCredentialStore(dirs)
	if err := store.Save(Credentials{URL: relayURL, SessionID: "s", Token: "t"}); err != nil {
		t.Fatal(err)
	}
	_, err = b.BridgeCall(context.Background(), "state.read", json.RawMessage(`{}`))
	if te := toolErr(t, err); te.Code != codeNotPaired || strings.Contains(te.Message, "is connected") {
		t.Fatalf("a pairing the relay rejects: %+v", te)
	}
	os.Chmod(store.Path(), 0o644)
	_, err = b.BridgeCall(context.Background(), "state.read", json.RawMessage(`{}`))
	if te := toolErr(t, err); te.Code != codeNotPaired || !strings.Contains(te.Message, "chmod 600") {
		t.Fatalf("an unsafe pairing file: %+v", te)
	}
}
