package terminal

import (
	"os"
	"time"
)

// Config tunes a Manager. The zero value of a field means its default.
type Config struct {
	// Shell runs every command as Shell -c COMMAND. Default /bin/sh: the
	// host's POSIX shell, so commands use sh syntax (dash on Debian and
	// Ubuntu, bash in sh mode elsewhere). On Windows the default is
	// cmd.exe from the system directory, run as cmdLine says; a shell
	// named cmd or cmd.exe has its commands judged by cmd's grammar
	// (dialectOf) and limited to what cmd reads (8189 bytes, one line).
	Shell string
	// Env is the environment children start from, before secrets are
	// stripped. Default: the hub's environment when the Manager is made.
	Env []string
	// SecretPatterns are name patterns stripped in addition to
	// childenv.SecretNamePatterns.
	SecretPatterns []string

	// Timeout is the hard limit of a foreground command that does not ask
	// for its own (default 120 s); MaxTimeout is the most one may ask for
	// (default 10 min).
	Timeout    time.Duration
	MaxTimeout time.Duration
	// MaxOutput bounds the captured output of a foreground command (stdout
	// and stderr interleaved), head and tail kept (default 64 KiB).
	MaxOutput int
	// MaxCommand bounds a command's length (default 128 KiB - 1, Linux's
	// limit on one argument; at most cmdMaxCommand under cmd.exe).
	MaxCommand int

	// ForegroundSlots is how many foreground commands run at once across
	// all sessions (default 2). A further one queues, FIFO, for at most
	// GateWait (default 30 s), behind at most GateQueue others (default
	// 16); past either it is refused with terminal_busy.
	ForegroundSlots int
	GateWait        time.Duration
	GateQueue       int

	// KillGrace is how long a process tree has between SIGTERM and
	// SIGKILL (default 2 s). DrainWait is how long output is still read
	// after that, for processes that still hold the pipe: released ones
	// that detached, or any the command handed it to (default 1 s).
	KillGrace time.Duration
	DrainWait time.Duration

	// StartupWindow is the longest a background launch is watched before
	// its result is given (default 5 s). Once the transcript shows a URL
	// or a port, the watch ends after StartupSettle of quiet (default
	// 500 ms). MaxTranscript bounds the transcript (default 16 KiB).
	StartupWindow time.Duration
	StartupSettle time.Duration
	MaxTranscript int
	// MaxBackground is how many background processes one Runner (session)
	// may have (default 8); MaxBackgroundTotal across all (default 32).
	MaxBackground      int
	MaxBackgroundTotal int

	Clock Clock
}

// Defaults are the values zero fields take.
var Defaults = Config{
	Shell:              defaultShell(),
	Timeout:            120 * time.Second,
	MaxTimeout:         10 * time.Minute,
	MaxOutput:          64 << 10,
	MaxCommand:         128<<10 - 1,
	ForegroundSlots:    2,
	GateWait:           30 * time.Second,
	GateQueue:          16,
	KillGrace:          2 * time.Second,
	DrainWait:          time.Second,
	StartupWindow:      5 * time.Second,
	StartupSettle:      500 * time.Millisecond,
	MaxTranscript:      16 << 10,
	MaxBackground:      8,
	MaxBackgroundTotal: 32,
}

func (c Config) withDefaults() Config {
	d := Defaults
	set := func(dst *time.Duration, v time.Duration) {
		if v > 0 {
			*dst = v
		}
	}
	seti := func(dst *int, v int) {
		if v > 0 {
			*dst = v
		}
	}
	if c.Shell != "" {
		d.Shell = c.Shell
	}
	d.Env = c.Env
	if d.Env == nil {
		d.Env = os.Environ()
	}
	d.SecretPatterns = c.SecretPatterns
	set(&d.Timeout, c.Timeout)
	set(&d.MaxTimeout, c.MaxTimeout)
	seti(&d.MaxOutput, c.MaxOutput)
	seti(&d.MaxCommand, c.MaxCommand)
	seti(&d.ForegroundSlots, c.ForegroundSlots)
	set(&d.GateWait, c.GateWait)
	seti(&d.GateQueue, c.GateQueue)
	set(&d.KillGrace, c.KillGrace)
	set(&d.DrainWait, c.DrainWait)
	set(&d.StartupWindow, c.StartupWindow)
	set(&d.StartupSettle, c.StartupSettle)
	seti(&d.MaxTranscript, c.MaxTranscript)
	seti(&d.MaxBackground, c.MaxBackground)
	seti(&d.MaxBackgroundTotal, c.MaxBackgroundTotal)
	d.Clock = c.Clock
	if d.Clock == nil {
		d.Clock = wallClock{}
	}
	if dialectOf(d.Shell) == dialectCmd {
		d.MaxCommand = min(d.MaxCommand, cmdMaxCommand)
	}
	if d.Timeout > d.MaxTimeout {
		d.MaxTimeout = d.Timeout
	}
	return d
}
