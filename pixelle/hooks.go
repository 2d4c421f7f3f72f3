package pixelle

import (
	"strconv"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// The hooks through which the rest of the binary reaches the hub's relay
// without importing this package (adapters.Factory): from another process
// as its agent client (Remote).

// RelayURL is the canonical URL of the relay on a loopback port.
func RelayURL(port int) string { return "http://" + hub.LoopbackHost + ":" + strconv.Itoa(port) }

// remote reaches the hub's relay that st describes from another process
// (Factory.Remote), as the agent client of §5.3.
func remote(env adapters.RemoteEnv, st adapters.Status) (adapters.ToolBridge, bool) {
	return NewRemoteBridge(env.Dirs, RelayURL(st.Ports[0])), true
}
