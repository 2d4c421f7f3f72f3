package aiui

import "github.com/hubdev/hub/adapters"

// Factory registers the aiui adapter.
func Factory() adapters.Factory {
	return adapters.Factory{
		Name:      "aiui",
		Summary:   "aiui channel backend (/ws, /tools, /prompt, /health)",
		NewConfig: NewConfig,
		New:       func(adapters.Config) (adapters.Adapter, error) { return nil, adapters.ErrNotImplemented },
	}
}
