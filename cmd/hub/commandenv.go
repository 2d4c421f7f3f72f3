package main

import (
	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// commandEnv is what the bridges' command groups get from this binary:
// the hub running for this user (runningHub), and its bridges reached
// from this process through the registry's Remote hooks (for `hub geturl
// serve`'s /k plugins beside a hub), with this process's dirs.
func commandEnv(reg *adapters.Registry) adapters.CommandEnv {
	return adapters.CommandEnv{
		RunningHub: (&runningHub{}).Adapters,
		Remote: func(name string, st adapters.Status) (adapters.ToolBridge, bool) {
			dirs, err := hub.DirsFromEnv()
			if err != nil {
				return nil, false
			}
			return reg.Remote(adapters.RemoteEnv{Dirs: dirs}, name, st)
		},
	}
}
