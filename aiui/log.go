package aiui

import "log/slog"

// adaptersLog carries a CLI logger (stderr only: stdout is protocol).
type adaptersLog struct{ l *slog.Logger }

type adaptersLogger = *slog.Logger
