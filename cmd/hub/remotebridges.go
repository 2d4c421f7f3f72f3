package main

import (
	"strconv"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/aiui"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/pixelle"
	"github.com/hubdev/hub/stitchslop"
	"github.com/hubdev/hub/supervisor"
)

// remoteBridge reaches a bridge of the running hub from this process (for
// `hub geturl serve`'s /k plugins beside a hub): stitchslop through the
// session file and control plane on the port the hub reports, aiui through
// its control file, pixelle as the agent client of the relay on that port.
func remoteBridge(name string, st adapters.Status) (adapters.ToolBridge, bool) {
	dirs, err := hub.DirsFromEnv()
	if err != nil || len(st.Ports) == 0 {
		return nil, false
	}
	switch name {
	case "stitchslop":
		hubState, _, _ := supervisor.Probe(dirs.State)
		if hubState == nil {
			return nil, false
		}
		return stitchslop.NewRemoteBridge(stitchslopDir(hubState, dirs), st.Ports[0]), true
	case "aiui":
		return aiui.NewRemoteBridge(dirs), true
	case "pixelle":
		return pixelle.NewRemoteBridge(dirs, "http://"+hub.LoopbackHost+":"+strconv.Itoa(st.Ports[0])), true
	}
	return nil, false
}
