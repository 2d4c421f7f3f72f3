package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/registry"
	"github.com/hubdev/hub/supervisor"
)

// startTimeout bounds the wait for a detached hub's readiness.
const startTimeout = 30 * time.Second

func startCommand() *cli.Command {
	return &cli.Command{
		Name:  "start",
		Usage: "start the hub in the background (no systemd needed)",
		Description: "Re-executes `hub run` detached from this terminal (own session, stdin /dev/null,\n" +
			"output to the log file in the state dir), waits until every adapter is listening or has\n" +
			"failed to start, and prints the pid and ports. An adapter that cannot start (its port is\n" +
			"taken) does not stop the others: the hub starts without it, retries it until it comes up,\n" +
			"and `hub start` names it in a warning on stderr and exits 0. Only when no adapter could\n" +
			"start does the hub stop: the error and this run's log lines, exit 1.",
		Flags: []cli.Flag{configFlag, logMaxFlag},
		Action: func(c *cli.Context) error {
			dirs, err := hub.DirsFromEnv()
			if err != nil {
				return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
			}
			st, live, msg := supervisor.Probe(dirs.State)
			switch live {
			case supervisor.Running:
				return hub.Exit(hub.ExitFailed, fmt.Sprintf("hub: already running (pid %d)", st.PID))
			case supervisor.Stale:
				if supervisor.LockHeld(dirs.State) {
					return alreadyRunning(dirs.State)
				}
				fmt.Fprintf(c.App.ErrWriter, "hub: %s; starting a new hub\n", msg)
			case supervisor.Unsafe:
				return hub.Exit(hub.ExitFailed, "hub: "+msg)
			}
			msgOK, run, err := startDetached(c.String("config"), dirs, c.Int64("log-max"))
			if errors.Is(err, supervisor.ErrAlreadyRunning) {
				return alreadyRunning(dirs.State)
			}
			if errors.Is(err, errSpawn) {
				fmt.Fprintf(c.App.ErrWriter, "hub: %v\n", err)
				if tail := run.tail(20); tail != "" {
					fmt.Fprintf(c.App.ErrWriter, "--- this run's last lines of %s ---\n%s", run.path, tail)
				}
				return hub.Exit(hub.ExitFailed, "")
			}
			if err != nil {
				return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
			}
			fmt.Fprintf(c.App.Writer, "hub started (pid %d)\n", msgOK.PID)
			printAdapters(c.App.Writer, msgOK.Adapters, time.Now())
			fmt.Fprintf(c.App.Writer, "logs: %s (hub logs -f)\n", run.path)
			if failed := failedAdapters(msgOK.Adapters); len(failed) > 0 {
				fmt.Fprintf(c.App.ErrWriter, "hub: warning: started without %s: could not start (see NOTE above, or hub status); the hub retries until it comes up\n",
					strings.Join(failed, ", "))
			}
			return nil
		},
	}
}

// alreadyRunning is hub start's answer when another hub holds the state
// dir's lock: one running, or one still starting (the winner of two
// racing starts) whose state file is not written yet. Its log is not this
// start's to show.
func alreadyRunning(dir string) error {
	if st, live, _ := supervisor.Probe(dir); live == supervisor.Running {
		return hub.Exit(hub.ExitFailed, fmt.Sprintf("hub: already running (pid %d)", st.PID))
	}
	return hub.Exit(hub.ExitFailed, "hub: already running (another hub is starting or stopping; see hub status)")
}

// failedAdapters names the adapters that could not start.
func failedAdapters(list []adapters.Status) []string {
	var out []string
	for _, a := range list {
		if a.State == adapters.StateFailed {
			out = append(out, a.Name)
		}
	}
	return out
}

// logRun is the part of a log file one start wrote: from offset from on.
type logRun struct {
	path string
	from int64
}

// tail is the last n lines this run wrote ("" if none or unreadable). A
// file shorter than from was rotated since: all of it is this run's.
func (r logRun) tail(n int) string {
	if r.path == "" {
		return ""
	}
	f, err := hub.OpenPrivate(r.path, os.O_RDONLY, 0, false)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	from := r.from
	if fi.Size() < from {
		from = 0
	}
	lines, err := lastLines(io.NewSectionReader(f, from, fi.Size()-from), n)
	if err != nil || len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// errSpawn marks a start that failed after the config was valid: the log
// file may say why.
var errSpawn = errors.New("start failed")

// startDetached validates the config, then starts a detached hub on it and
// returns its readiness and the part of its log file this run wrote. The
// config is checked before anything is spawned, so a bad one is one clear
// line and nothing is half-started.
func startDetached(configFlag string, dirs hub.Dirs, logMax int64) (*readyMsg, logRun, error) {
	cfgPath, err := supervisor.ConfigPath(configFlag, dirs)
	if err != nil {
		return nil, logRun{}, err
	}
	if _, err := supervisor.LoadConfig(cfgPath, registry.New()); err != nil {
		return nil, logRun{}, err
	}
	for _, d := range []string{dirs.State, dirs.Log} {
		if err := hub.EnsurePrivateDir(d); err != nil {
			if !errors.Is(err, hub.ErrUnsafeFile) {
				err = fmt.Errorf("state dir %s: %v", d, errors.Unwrap(err))
			}
			return nil, logRun{}, err
		}
	}
	run := logRun{path: filepath.Join(dirs.Log, supervisor.LogFileName)}
	rotateLog(run.path, logMax)
	if fi, err := os.Stat(run.path); err == nil {
		run.from = fi.Size() // what earlier runs wrote is not this start's to show
	}
	msg, err := spawnDetached(cfgPath, run.path, logMax, dirs.Home)
	if err != nil {
		ingestInto(run.path, true)
		return nil, run, fmt.Errorf("%w: %w", errSpawn, err)
	}
	return msg, run, nil
}

// ingestInto brings what a hub wrote outside its log (its error on
// stderr, a crash) into the log at logPath as JSON records, for hub
// start's tail and for `hub logs`; create makes the log if there is none.
func ingestInto(logPath string, create bool) {
	flag := os.O_WRONLY | os.O_APPEND
	if create {
		flag |= os.O_CREATE
	}
	f, err := hub.OpenPrivate(logPath, flag, 0o600, false)
	if err != nil {
		return
	}
	defer f.Close()
	hub.Ingest(filepath.Dir(logPath), f)
}

// spawnDetached starts `hub run --detached` detached (detach: its own
// session in / on unix, no console and its own process group on Windows;
// with home as HOME) with stdin on /dev/null and stdout/stderr appended
// to hub.out beside logPath (never to the log itself, which holds only
// JSON lines: see hub.Ingest), and waits for its readiness line. The caller's stdout and stderr are never inherited, so
// `out=$(hub start)` returns as soon as the hub is ready.
func spawnDetached(cfgPath, logPath string, logMax int64, home string) (*readyMsg, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// Never through a planted link (as root, that appended to and chmod'ed
	// the link's target); the chmod below is on our own descriptor.
	outPath := filepath.Join(filepath.Dir(logPath), hub.OutputFileName)
	logf, err := hub.OpenPrivate(outPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600, false)
	if err != nil {
		return nil, fmt.Errorf("output file: %w", err)
	}
	defer logf.Close()
	if err := logf.Chmod(0o600); err != nil {
		return nil, fmt.Errorf("output file: %w", err)
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	cmd := exec.Command(self)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	readyFD := detach(cmd, pw)
	args := []string{"run", "--detached", "--ready-fd", readyFD, "--log-max", strconv.FormatInt(logMax, 10)}
	if cfgPath != "" {
		abs, _ := filepath.Abs(cfgPath)
		args = append(args, "--config", abs)
	}
	cmd.Args = append(cmd.Args, args...)
	// HOME as this process resolved it: a relative one would name
	// another directory in /.
	cmd.Env = append(os.Environ(), "HOME="+home)
	closeInheritedOnExec()
	if err := cmd.Start(); err != nil {
		pw.Close()
		return nil, err
	}
	pw.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(pr).ReadString('\n')
		lines <- line
	}()
	select {
	case line := <-lines:
		var m readyMsg
		if line == "" || json.Unmarshal([]byte(line), &m) != nil {
			err := <-exited
			return nil, fmt.Errorf("hub exited before it was ready (%v)", err)
		}
		if !m.OK {
			<-exited
			if strings.HasPrefix(m.Error, supervisor.ErrAlreadyRunning.Error()) {
				// another start won the lock since this one probed
				return nil, supervisor.ErrAlreadyRunning
			}
			return nil, errors.New(m.Error)
		}
		return &m, nil
	case <-time.After(startTimeout):
		how := abandonStart(cmd.Process)
		return nil, fmt.Errorf("not ready after %s (pid %d %s)", startTimeout, cmd.Process.Pid, how)
	}
}

// rotateLog starts a fresh log before a new hub when the old one is over
// the cap, the same way the running hub rotates (hub.RotatingFile).
func rotateLog(path string, logMax int64) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > logMax {
		hub.RotateFiles(path, hub.DefaultLogKeep)
	}
}

// lastLines reads the last n lines of r, reading at most the final 1 MiB.
func lastLines(r io.ReadSeeker, n int) ([]string, error) {
	const window = 1 << 20
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	start := max(size-window, 0)
	if _, err := r.Seek(start, io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	text := strings.TrimRight(string(b), "\n")
	if text == "" {
		return nil, nil
	}
	all := strings.Split(text, "\n")
	if start > 0 && len(all) > 1 {
		all = all[1:] // the first line may be cut
	}
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return all, nil
}
