package autostart

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// launcherCases are program directories and --config values that stress
// the Exec quoting; the program is a script that records the argv it
// gets, so a real launcher's reading is compared with what was meant.
var launcherCases = []struct{ dir, config string }{
	{"plain", "/etc/hub.yaml"},
	{"José Müller's \"hub\"", "/home/me/my hub/100% \"sure\".yaml"},
	{"$HOME `id` ;|*?#()~ & <x>", "/a/$PATH `x` 'y' %f %%.yaml"},
	{"日本語 🚀", "/a/=;~#.yaml"},
	{"no-break\u00a0space", "/a/no-break\u00a0"}, // a Unicode space separates nothing
}

// argvRecorder writes a script in dir that saves its argv, NUL-separated,
// to out (through a rename, so a reader never sees half of it).
func argvRecorder(t *testing.T, dir, out string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "hub")
	if strings.Contains(out, "'") {
		t.Fatalf("%s: the recorder quotes it in single quotes", out)
	}
	script := "#!/bin/sh\nout='" + out + "'\nprintf '%s\\0' \"$0\" \"$@\" > \"$out.tmp\" && mv \"$out.tmp\" \"$out\"\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestDesktopExecGLib launches each entry with GLib (`gio launch`, what
// GNOME's session and most desktops use) and checks the program got
// exactly the intended arguments.
func TestDesktopExecGLib(t *testing.T) {
	gio, err := exec.LookPath("gio")
	if err != nil {
		t.Skip("no gio (GLib's launcher): apt-get install libglib2.0-bin")
	}
	for i, tc := range launcherCases {
		tmp := t.TempDir()
		out := filepath.Join(tmp, "argv")
		exe := argvRecorder(t, filepath.Join(tmp, tc.dir), out)
		argv := Entry{Exe: exe, Config: tc.config}.Argv(XDG)
		data, err := renderDesktop(argv)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		file := filepath.Join(tmp, "hub.desktop")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if b, err := exec.CommandContext(ctx, gio, "launch", file).CombinedOutput(); err != nil {
			cancel()
			t.Fatalf("%d: gio launch: %v\n%s", i, err, b)
		}
		got := waitArgv(ctx, t, out)
		cancel()
		if !slices.Equal(got, argv) {
			t.Errorf("%d: GLib ran\n%q\nwant\n%q\nExec line: %s", i, got, argv, execLine(argv))
		}
	}
}

// waitArgv waits for the recorder's file (gio launch returns once the
// program is spawned, not when it is done).
func waitArgv(ctx context.Context, t *testing.T, path string) []string {
	t.Helper()
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		}
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the launched program wrote no %s", path)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestDesktopExecSystemd runs systemd's XDG autostart generator (what
// GNOME and KDE sessions under systemd use: each entry becomes a user
// service) over each entry and reads the argv back out of the ExecStart=
// it generates.
func TestDesktopExecSystemd(t *testing.T) {
	gen := "/usr/lib/systemd/user-generators/systemd-xdg-autostart-generator"
	if _, err := os.Stat(gen); err != nil {
		t.Skip("no systemd-xdg-autostart-generator")
	}
	execStart := regexp.MustCompile(`(?m)^ExecStart=:(.*)$`)
	for i, tc := range launcherCases {
		tmp := t.TempDir()
		exe := argvRecorder(t, filepath.Join(tmp, tc.dir), filepath.Join(tmp, "argv"))
		argv := Entry{Exe: exe, Config: tc.config}.Argv(XDG)
		m, err := For(XDG, Options{Home: tmp, Getenv: func(k string) string {
			if k == "XDG_CONFIG_HOME" {
				return filepath.Join(tmp, "config")
			}
			return ""
		}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Enable(Entry{Exe: exe, Config: tc.config}); err != nil {
			t.Fatal(err)
		}
		units := filepath.Join(tmp, "units")
		if err := os.Mkdir(units, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(gen, units, units, units)
		cmd.Env = []string{"HOME=" + tmp, "XDG_CONFIG_HOME=" + filepath.Join(tmp, "config"), "XDG_CONFIG_DIRS=" + filepath.Join(tmp, "none"), "PATH=/usr/bin:/bin"}
		log, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%d: generator: %v\n%s", i, err, log)
		}
		unit, err := os.ReadFile(filepath.Join(units, "app-"+strings.ReplaceAll(Label, "-", `\x2d`)+"@autostart.service"))
		if err != nil {
			list, _ := os.ReadDir(units)
			t.Fatalf("%d: no unit generated (%v): %v\n%s", i, list, err, log)
		}
		mm := execStart.FindSubmatch(unit)
		if mm == nil {
			t.Fatalf("%d: no ExecStart in\n%s", i, unit)
		}
		// The unit's command line: %% is a literal % (unit specifiers),
		// the rest is quoted as POSIX sh double quotes.
		line := strings.ReplaceAll(string(mm[1]), "%%", "%")
		b, err := exec.Command("sh", "-c", `eval "set -- $1"; printf '%s\0' "$@"`, "sh", line).Output()
		if err != nil {
			t.Fatalf("%d: sh: %v", i, err)
		}
		got := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if !slices.Equal(got, argv) {
			t.Errorf("%d: systemd runs\n%q\nwant\n%q\nExec line: %s\nExecStart: %s", i, got, argv, execLine(argv), mm[1])
		}
	}
}
