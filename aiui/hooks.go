package aiui

import (
	"github.com/hubdev/hub/adapters"
)

// The hooks through which the rest of the binary reaches the hub's aiui
// adapter without importing this package (adapters.Factory): from another
// process through its control file (Remote).

// remote reaches the hub's backend from another process (Factory.Remote),
// through the control file it writes.
func remote(env adapters.RemoteEnv, _ adapters.Status) (adapters.ToolBridge, bool) {
	return NewRemoteBridge(env.Dirs), true
}
