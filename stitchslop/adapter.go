package stitchslop

import "github.com/hubdev/hub/adapters"

// Factory registers the stitchslop adapter.
func Factory() adapters.Factory {
	return adapters.Factory{
		Name:      "stitchslop",
		Summary:   "Stitch Slop bridge (page WebSocket, pairing, control plane)",
		NewConfig: NewConfig,
		New:       func(adapters.Config) (adapters.Adapter, error) { return nil, adapters.ErrNotImplemented },
	}
}
