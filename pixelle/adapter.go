package pixelle

import "github.com/hubdev/hub/adapters"

// Factory registers the pixelle adapter.
func Factory() adapters.Factory {
	return adapters.Factory{
		Name:      "pixelle",
		Summary:   "Pixelle canvas relay (pixelle-relay/0.2)",
		NewConfig: NewConfig,
		New:       func(adapters.Config) (adapters.Adapter, error) { return nil, adapters.ErrNotImplemented },
	}
}
