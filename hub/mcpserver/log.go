package mcpserver

import (
	"context"
	"log/slog"
)

// minLevel passes on records at or above min: the SDK logs every session
// at Info, which is noise on a face's stderr; its warnings and errors
// (jsonrpc2 internal errors among them) are not.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}
