package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/autostart"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/registry"
	"github.com/hubdev/hub/supervisor"
)

func autostartCommand() *cli.Command {
	return &cli.Command{
		Name:  "autostart",
		Usage: "start the hub when you log in (no systemd needed)",
		Description: "enable registers this hub binary to start at login, the OS's own way for one user:\n" +
			"a LaunchAgent on macOS (~/Library/LaunchAgents/" + autostart.Label + ".plist), an XDG\n" +
			"autostart entry on Linux ($XDG_CONFIG_HOME/autostart/" + autostart.Label + ".desktop), a Run\n" +
			"value on Windows (HKCU\\" + autostart.RunKeyPath + "). It takes effect at the next login;\n" +
			"`hub start` starts a hub now. disable removes the entry (a running hub keeps running);\n" +
			"status says whether it is enabled and whether it runs this binary. All three are\n" +
			"idempotent. Exit status: 0 done, 1 failed, 64 usage.",
		Subcommands: []*cli.Command{
			{
				Name:  "enable",
				Usage: "start this hub binary at login (with --config, on that config)",
				Flags: []cli.Flag{configFlag},
				Action: func(c *cli.Context) error {
					return autostartEnable(c.App.Writer, c.App.ErrWriter, c.String("config"))
				},
			},
			{
				Name:  "disable",
				Usage: "stop starting the hub at login",
				Action: func(c *cli.Context) error {
					return autostartDisable(c.App.Writer)
				},
			},
			{
				Name:  "status",
				Usage: "say whether the hub starts at login, and which binary",
				Action: func(c *cli.Context) error {
					return autostartStatus(c.App.Writer)
				},
			},
		},
	}
}

// autostartManager is this OS's autostart for the user the environment
// names, and the binary to register: this one, symlinks resolved, so that
// the entry names the file that runs now.
func autostartManager() (*autostart.Manager, hub.Dirs, string, error) {
	dirs, err := hub.DirsFromEnv()
	if err != nil {
		return nil, dirs, "", err
	}
	m, err := autostart.For(autostart.Native, autostart.Options{Home: dirs.Home, Getenv: os.Getenv})
	if err != nil {
		return nil, dirs, "", err
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return nil, dirs, "", fmt.Errorf("cannot find this program's path: %w", err)
	}
	return m, dirs, exe, nil
}

func autostartEnable(stdout, stderr io.Writer, configFlag string) error {
	m, dirs, exe, err := autostartManager()
	if err != nil {
		return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
	}
	// The hub at login reads the config this one would: refuse one it
	// would fail on now, rather than fail unseen at the next login.
	e := autostart.Entry{Exe: exe}
	if configFlag != "" {
		if e.Config, err = filepath.Abs(configFlag); err != nil {
			return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
		}
	}
	path, err := supervisor.ConfigPath(e.Config, dirs)
	if err == nil {
		_, err = supervisor.LoadConfig(path, registry.New())
	}
	if err != nil {
		return hub.Exit(hub.ExitFailed, "hub: autostart not enabled: "+err.Error())
	}
	if temporaryBuild(exe) {
		fmt.Fprintf(stderr, "hub: warning: %s is a temporary build (go run, go test): the entry stops working once it is deleted; install hub and enable it from there\n", exe)
	}
	changed, err := m.Enable(e)
	if err != nil {
		return hub.Exit(hub.ExitFailed, "hub: autostart not enabled: "+err.Error())
	}
	if !changed {
		fmt.Fprintf(stdout, "autostart already enabled: %s\n", m.Where())
		return nil
	}
	fmt.Fprintf(stdout, "autostart enabled: %s\n", m.Where())
	fmt.Fprintf(stdout, "at login it runs: %s\n", autostart.Describe(e.Argv(m.Kind())))
	fmt.Fprintln(stdout, "it takes effect at your next login; 'hub start' starts a hub now")
	return nil
}

func autostartDisable(stdout io.Writer) error {
	m, _, _, err := autostartManager()
	if err != nil {
		return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
	}
	removed, err := m.Disable()
	if err != nil {
		return hub.Exit(hub.ExitFailed, "hub: autostart not disabled: "+err.Error())
	}
	if !removed {
		fmt.Fprintf(stdout, "autostart already disabled: no %s\n", m.Where())
		return nil
	}
	fmt.Fprintf(stdout, "autostart disabled: removed %s\n", m.Where())
	fmt.Fprintln(stdout, "a hub already running keeps running ('hub stop' stops it)")
	return nil
}

func autostartStatus(stdout io.Writer) error {
	m, _, exe, err := autostartManager()
	if err != nil {
		return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
	}
	st, err := m.Status(exe)
	if err != nil {
		return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
	}
	if !st.Enabled {
		fmt.Fprintf(stdout, "autostart: disabled (no %s %s)\n", st.Kind, st.Where)
		return nil
	}
	state := "enabled"
	if st.Off != "" {
		state = "enabled, but turned off by your desktop (" + st.Off + ")"
	}
	fmt.Fprintf(stdout, "autostart: %s\n", state)
	fmt.Fprintf(stdout, "entry: %s (%s)\n", st.Where, st.Kind)
	if st.Problem != "" {
		fmt.Fprintf(stdout, "runs: unknown: %s\n", st.Problem)
		fmt.Fprintln(stdout, "note: 'hub autostart enable' rewrites it")
		return nil
	}
	fmt.Fprintf(stdout, "runs: %s\n", autostart.Describe(st.Argv))
	switch {
	case !st.ThisBinary:
		what := "another binary"
		if _, err := os.Stat(st.Argv[0]); err != nil {
			what = "a binary that does not exist"
		}
		fmt.Fprintf(stdout, "binary: %s, not this one (%s); 'hub autostart enable' points it here\n", what, exe)
	case !st.Current:
		fmt.Fprintln(stdout, "binary: this one, but the entry is not what 'hub autostart enable' writes now; run it to update")
	default:
		fmt.Fprintln(stdout, "binary: this one")
	}
	return nil
}

// temporaryBuild reports whether exe is one the go command built in a
// temporary directory (go run, go test), which it deletes afterwards.
func temporaryBuild(exe string) bool {
	for _, part := range strings.Split(filepath.ToSlash(exe), "/") {
		if strings.HasPrefix(part, "go-build") {
			return true
		}
	}
	return false
}
