package hub

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/lmittmann/tint"
)

// LogOptions chooses how a process logs.
type LogOptions struct {
	Level  string // debug, info, warn, error
	Format string // text (tint) or json
}

// ParseLevel maps a config level name to a slog level.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "", "info":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("must be one of debug, info, warn, error, got %q", s)
}

// NewLogger returns a logger writing to w: tint text (colour only when w is a
// terminal and NO_COLOR is unset) or JSON lines. Logs never go to stdout,
// which belongs to protocols and JSON output.
func NewLogger(w io.Writer, opts LogOptions) (*slog.Logger, error) {
	level, err := ParseLevel(opts.Level)
	if err != nil {
		return nil, err
	}
	switch strings.ToLower(opts.Format) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})), nil
	case "", "text":
		return slog.New(tint.NewHandler(w, &tint.Options{
			Level:      level,
			TimeFormat: time.TimeOnly,
			NoColor:    !ColorAllowed(w),
		})), nil
	}
	return nil, fmt.Errorf("log format must be text or json, got %q", opts.Format)
}

// ColorAllowed reports whether w is a terminal and NO_COLOR is unset or
// empty (no-color.org: "present and not an empty string" disables colour).
func ColorAllowed(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
