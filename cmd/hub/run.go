package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/registry"
	"github.com/hubdev/hub/supervisor"
)

// logMaxFlag caps hub.log while a detached hub runs (hidden: tests set a
// small cap to see the running hub rotate its own log).
var logMaxFlag = &cli.Int64Flag{Name: "log-max", Hidden: true, Value: hub.DefaultLogMaxSize, Usage: "rotate hub.log past this many `BYTES`"}

var configFlag = &cli.StringFlag{
	Name:    "config",
	Aliases: []string{"c"},
	Usage:   "config `FILE` (default: $XDG_CONFIG_HOME/hub/hub.yaml if it exists, else the embedded default)",
}

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "run the hub in the foreground (Ctrl-C stops it)",
		Description: "Starts every enabled adapter on its loopback port and serves until SIGINT/SIGTERM,\n" +
			"`hub stop`, or an idle rule (see lifecycle in the config). Logs go to stderr.",
		Flags: []cli.Flag{
			configFlag,
			&cli.BoolFlag{Name: "detached", Hidden: true, Usage: "log JSON lines (set by hub start)"},
			&cli.IntFlag{Name: "ready-fd", Hidden: true, Usage: "report readiness as one JSON line on this fd"},
			logMaxFlag,
			&cli.DurationFlag{Name: "state-check", Hidden: true, Value: supervisor.StateCheckInterval, Usage: "how often the state file and lock are checked and repaired"},
		},
		Action: runHub,
	}
}

// readyMsg is the one line a detached hub sends its parent on the ready pipe.
type readyMsg struct {
	OK       bool              `json:"ok"`
	PID      int               `json:"pid,omitempty"`
	Error    string            `json:"error,omitempty"`
	Adapters []adapters.Status `json:"adapters,omitempty"`
}

type readyPipe struct{ f *os.File }

func (p *readyPipe) send(m readyMsg) {
	if p == nil || p.f == nil {
		return
	}
	json.NewEncoder(p.f).Encode(m)
	p.f.Close()
	p.f = nil
}

// loadConfig resolves the config path and loads it.
func loadConfig(explicit string, dirs hub.Dirs) (*supervisor.Config, error) {
	path, err := supervisor.ConfigPath(explicit, dirs)
	if err != nil {
		return nil, err
	}
	return supervisor.LoadConfig(path, registry.New())
}

func runHub(c *cli.Context) error {
	var ready *readyPipe
	if fd := c.Int("ready-fd"); fd > 0 {
		// Inherited descriptors survive exec: a program an adapter starts
		// before readiness (cloudflared, opencode) would hold the pipe,
		// and `hub start` would wait for its EOF long after a crash.
		keepFromChildren(fd)
		ready = &readyPipe{f: os.NewFile(uintptr(fd), "ready")}
	}
	fail := func(err error) error {
		ready.send(readyMsg{Error: err.Error()})
		return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
	}
	dirs, err := hub.DirsFromEnv()
	if err != nil {
		return fail(err)
	}
	cfg, err := loadConfig(c.String("config"), dirs)
	if err != nil {
		return fail(err)
	}
	logOpts := hub.LogOptions{Level: cfg.Log.Level, Format: cfg.Log.Format}
	var logOut io.Writer = os.Stderr
	var rf *hub.RotatingFile
	if c.Bool("detached") {
		logOpts.Format = "json"
		// The detached hub rotates its own log by size while it runs,
		// and is its only writer: a crash's report goes to its own file
		// (and stderr, hub start's hub.out), brought in as JSON records.
		for _, d := range []string{dirs.State, dirs.Log} {
			if err := hub.EnsurePrivateDir(d); err != nil {
				return fail(err)
			}
		}
		rf, err = hub.OpenRotating(filepath.Join(dirs.Log, supervisor.LogFileName), c.Int64("log-max"), hub.DefaultLogKeep)
		if err != nil {
			return fail(fmt.Errorf("log file: %w", err))
		}
		defer rf.Close()
		if err := hub.CaptureCrashes(dirs.Log); err != nil {
			return fail(fmt.Errorf("crash file: %w", err))
		}
		logOut = rf
	}
	log, err := hub.NewLogger(logOut, logOpts)
	if err != nil {
		return fail(err)
	}
	limit, from := hub.SetMemoryLimit()
	log.Debug("soft memory limit", "bytes", limit, "from", from)
	procs, from := setMaxProcs(cfg.Runtime.MaxProcs)
	log.Debug("max procs", "n", procs, "from", from)
	lock, err := supervisor.AcquireLock(dirs.State)
	if err != nil {
		return fail(err)
	}
	defer lock.Release()
	// One FileKeeper checks every file the hub keeps (its log, its state
	// file, each adapter's control and session files) on one ticker, so an
	// idle hub wakes once per --state-check for all of them.
	files := hub.NewFileKeeper(c.Duration("state-check"))
	filesCtx, stopFiles := context.WithCancel(context.Background())
	filesDone := make(chan struct{})
	go func() { defer close(filesDone); files.Run(filesCtx) }()
	defer func() { stopFiles(); <-filesDone }()
	if rf != nil {
		// Only the hub holding the lock keeps hub.log in place: one that
		// lost the race must not recreate the winner's log.
		// What the hub before this one left outside its log (a crash)
		// comes in first.
		hub.Ingest(dirs.Log, rf)
		defer keepLog(files, rf, dirs.Log)() // stops before rf.Close
	}

	sup, err := supervisor.New(supervisor.Options{Config: cfg, Dirs: dirs, Log: log, Files: files})
	if err != nil {
		return fail(err)
	}
	ctrlLn, ctrlPort, err := hub.Listen([]int{0})
	if err != nil {
		return fail(fmt.Errorf("control endpoint: %w", err))
	}
	ctx, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stopSignals()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// After the first signal, restore the default action so a second Ctrl-C
	// kills a shutdown that hangs.
	go func() { <-ctx.Done(); stopSignals() }()

	started := time.Now()
	// Where no lock table names the lock's holder (macOS, Windows), `hub
	// stop` and `hub status` know this pid is still us by its start.
	processStart, _ := hub.ProcessStart(os.Getpid())
	state := &supervisor.State{
		PID:     os.Getpid(),
		Control: fmt.Sprintf("http://%s:%d", hub.LoopbackHost, ctrlPort),
		Key:     hub.RandomToken(32),
		Started: started,
		Config:  cfg.Source,
		Version: versionString(),

		ShutdownSeconds: cfg.Lifecycle.ShutdownSeconds,
		ProcessStart:    processStart,
	}
	control := &supervisor.Control{
		Key:  state.Key,
		Port: ctrlPort,
		Status: func() any {
			doc := *state
			doc.Key = ""
			doc.Adapters = sup.Status()
			return statusDoc{State: doc, Running: true, Unavailable: hub.Unavailable()}
		},
		Stop: func() {
			log.Info("stop requested through the control endpoint")
			cancel()
		},
		Attach: sup.Lifecycle().Reporter("hub").AgentAttached,
	}
	ctrlCtx, stopControl := context.WithCancel(context.Background())
	ctrlDone := make(chan error, 1)
	go func() { ctrlDone <- hub.ServeHTTP(ctrlCtx, ctrlLn, control, nil, log) }()
	defer func() { stopControl(); <-ctrlDone }()

	// The state file is kept (rewritten if it goes missing or corrupt)
	// from ready until shutdown; the keeper stops before the file is
	// removed and before the lock is released.
	keepCtx, stopKeeping := context.WithCancel(context.Background())
	kept := make(chan struct{})
	keeping := false // ready runs on this goroutine, inside Serve
	unpublish := func() {}
	var stateErr error
	err = sup.Serve(ctx, func(st []adapters.Status) {
		state.Adapters = st
		if werr := supervisor.WriteState(dirs.State, state); werr != nil {
			// Without its state file no `hub status` or `hub stop` can
			// find this hub: it would run on, unmanageable, while `hub
			// start` reported success. Fail the start instead.
			stateErr = fmt.Errorf("cannot write the state file %s: %w", filepath.Join(dirs.State, supervisor.StateFileName), werr)
			log.Error("cannot write the state file; stopping", "err", werr)
			cancel()
			return
		}
		// Clients without this hub's XDG_STATE_HOME find it through a
		// pointer in the default state dir (hub.Locate).
		if u, perr := hub.Publish(dirs); perr != nil {
			log.Warn("clients without XDG_STATE_HOME will not find this hub", "err", perr)
		} else {
			unpublish = u
		}
		keeping = true
		go func() {
			defer close(kept)
			supervisor.KeepState(keepCtx, files, lock, state, c.Duration("state-check"), log)
		}()
		log.Info("hub ready", "pid", state.PID, "config", cfg.Source, "adapters", summary(st))
		ready.send(readyMsg{OK: true, PID: state.PID, Adapters: st})
	})
	stopKeeping()
	if keeping {
		<-kept
	}
	unpublish()
	supervisor.RemoveStateIfOurs(dirs.State, state.PID)
	if stateErr != nil {
		if err != nil {
			log.Error("hub stopped with an error", "err", err)
		}
		return fail(stateErr)
	}
	var idle *hub.IdleError
	switch {
	case err == nil:
		log.Info("hub stopped")
		return nil
	case errors.As(err, &idle):
		log.Info("hub exited because it was idle", "reason", idle.Reason)
		return nil
	default:
		log.Error("hub stopped with an error", "err", err)
		return fail(err)
	}
}

// summary is a compact "name=ports" list for the ready log line.
func summary(st []adapters.Status) slog.Value {
	attrs := make([]slog.Attr, 0, len(st))
	for _, s := range st {
		v := string(s.State)
		if s.State == adapters.StateRunning {
			v = hub.FormatPorts(s.Ports)
		}
		attrs = append(attrs, slog.String(s.Name, v))
	}
	return slog.GroupValue(attrs...)
}
