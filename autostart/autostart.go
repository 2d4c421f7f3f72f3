// Package autostart makes the hub start when the user logs in, the way each
// OS does it for one user and without a service manager: a LaunchAgent on
// macOS, an XDG autostart entry on Linux and the BSDs, a Run value under
// HKEY_CURRENT_USER on Windows.
//
// What an entry says (the plist, the .desktop file, the Run command line)
// is rendered and parsed by portable code, so the tests run all three on
// any OS; only the Run value's registry calls are Windows-only. An entry
// is one file or value, written whole (a file atomically) and removed
// whole, so enabling and disabling are idempotent.
//
// Enabling registers the entry and nothing else: no launchctl, no
// systemctl, no process started. The hub starts at the next login; a hub
// already running is not touched, and disabling never stops one.
package autostart

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"unicode/utf8"
)

// Label names the entry everywhere: the LaunchAgent's label and file
// name, the .desktop file's name, the Run value's name. Reverse DNS of
// the module path, so that no other program's "hub" collides with it.
const Label = "com.github.hubdev.hub"

// Kind is one OS's mechanism.
type Kind int

const (
	// LaunchAgent is macOS's: ~/Library/LaunchAgents/<Label>.plist, loaded
	// by launchd at login, running `hub run --detached` in the foreground
	// (launchd wants its jobs to stay) with no KeepAlive: a hub that
	// exits (idle, hub stop) stays stopped until the next login.
	LaunchAgent Kind = iota
	// XDG is the freedesktop autostart entry:
	// $XDG_CONFIG_HOME/autostart/<Label>.desktop, run by the desktop
	// session at login. It also runs `hub run --detached` in the
	// foreground: under systemd (GNOME, KDE) each entry runs as a
	// service, and one whose program forks and exits, as `hub start`
	// does, had what it left behind killed before systemd 250 and could
	// lose it to a start timeout until 254 (Debian 12 has 252).
	XDG
	// RunKey is Windows': the value <Label> under
	// HKCU\Software\Microsoft\Windows\CurrentVersion\Run, a command line
	// run at each logon. It runs `hub start`, which returns once the hub
	// is up: a console program that stayed would keep a console window
	// open for the whole session.
	RunKey
)

func (k Kind) String() string {
	switch k {
	case LaunchAgent:
		return "LaunchAgent"
	case XDG:
		return "XDG autostart entry"
	case RunKey:
		return "Run registry value"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Native is this OS's kind.
const Native = native

// Entry is what an autostart entry runs.
type Entry struct {
	Exe    string // the hub binary: absolute, symlinks resolved
	Config string // an absolute --config path, "" for the hub's default lookup
}

// Argv is the command line the entry runs, program first.
func (e Entry) Argv(k Kind) []string {
	argv := []string{e.Exe}
	if k == RunKey {
		argv = append(argv, "start")
	} else {
		argv = append(argv, "run", "--detached")
	}
	if e.Config != "" {
		argv = append(argv, "--config", e.Config)
	}
	return argv
}

// maxEntry bounds what is read back from a file or value: ours are a few
// hundred bytes.
const maxEntry = 64 << 10

// Store keeps the one entry, the OS calls behind it: a file in a
// directory, or a registry value.
type Store interface {
	// Where names the entry for messages: a path, a registry value.
	Where() string
	// Read returns the entry's bytes, an error matching fs.ErrNotExist
	// when there is none.
	Read() ([]byte, error)
	// Write creates or replaces the entry whole.
	Write(data []byte) error
	// Remove deletes the entry, an error matching fs.ErrNotExist when
	// there is none.
	Remove() error
}

// Manager enables, disables and reports one kind of entry.
type Manager struct {
	kind  Kind
	store Store
	env   []string // a LaunchAgent's EnvironmentVariables, "KEY=value"
}

// New returns a Manager of kind k whose entry store keeps. env is what a
// LaunchAgent sets in the hub's environment ("KEY=value"); the other
// kinds get the session's and ignore it.
func New(k Kind, store Store, env []string) *Manager {
	return &Manager{kind: k, store: store, env: slices.Clone(env)}
}

// Kind is the mechanism m manages.
func (m *Manager) Kind() Kind { return m.kind }

// Where names m's entry: its file, or its registry value.
func (m *Manager) Where() string { return m.store.Where() }

// Render is the entry's exact content for e: the plist, the .desktop
// file, the Run command line. It fails for a path the format cannot carry
// unchanged to the program (see each format).
func (m *Manager) Render(e Entry) ([]byte, error) {
	argv := e.Argv(m.kind)
	switch m.kind {
	case LaunchAgent:
		return renderPlist(Label, argv, m.env)
	case XDG:
		return renderDesktop(argv)
	case RunKey:
		s, err := renderRunKey(argv)
		return []byte(s), err
	}
	return nil, fmt.Errorf("autostart: unknown kind %v", m.kind)
}

// Enable writes the entry for e unless it is there already, byte for
// byte. changed reports whether anything was written.
func (m *Manager) Enable(e Entry) (changed bool, err error) {
	want, err := m.Render(e)
	if err != nil {
		return false, err
	}
	if have, err := m.store.Read(); err == nil && bytes.Equal(have, want) {
		return false, nil
	}
	if err := m.store.Write(want); err != nil {
		return false, fmt.Errorf("%s: %w", m.store.Where(), err)
	}
	return true, nil
}

// Disable removes the entry. removed reports whether there was one.
func (m *Manager) Disable() (removed bool, err error) {
	err = m.store.Remove()
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", m.store.Where(), err)
	}
	return true, nil
}

// Status is what an entry says, as `hub autostart status` reports it.
type Status struct {
	Kind    Kind
	Where   string
	Enabled bool     // the entry exists
	Argv    []string // the command it runs; nil when it cannot be read (Problem says why)
	Config  string   // its --config, "" for none
	// ThisBinary reports that it runs the binary asked about (the same
	// file, however named).
	ThisBinary bool
	// Current reports that it is byte for byte what Enable would write
	// for that binary and its own --config.
	Current bool
	// Off names the setting by which the desktop turned a present entry
	// off (Hidden=true, X-GNOME-Autostart-enabled=false); "" when on.
	Off string
	// Problem says why its command could not be read.
	Problem string
}

// Status reads the entry and compares it with what Enable would write
// for exe. The error is for an entry that exists but cannot be read.
func (m *Manager) Status(exe string) (Status, error) {
	st := Status{Kind: m.kind, Where: m.store.Where()}
	have, err := m.store.Read()
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("%s: %w", st.Where, err)
	}
	st.Enabled = true
	var argv []string
	switch m.kind {
	case LaunchAgent:
		argv, err = parsePlist(have)
	case XDG:
		var d desktopEntry
		d, err = parseDesktop(have)
		argv, st.Off = d.argv, d.off
	case RunKey:
		argv, err = parseRunKey(string(have))
	}
	if err == nil && len(argv) == 0 {
		err = errors.New("it runs no program")
	}
	if err != nil {
		st.Problem = err.Error()
		return st, nil
	}
	st.Argv = argv
	for i := 1; i+1 < len(argv); i++ {
		if argv[i] == "--config" {
			st.Config = argv[i+1]
		}
	}
	st.ThisBinary = sameFile(argv[0], exe)
	if want, err := m.Render(Entry{Exe: exe, Config: st.Config}); err == nil {
		st.Current = bytes.Equal(have, want)
	}
	return st, nil
}

// sameFile reports whether a and b name the same file: the same path, or
// two names (a link, another case on a case-insensitive disk) of one.
func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// checkText refuses what no format here can carry to the program
// unchanged: bytes that are not UTF-8 (plists and .desktop files are
// UTF-8; the registry is UTF-16) and control characters, which launchers
// read as line ends or drop.
func checkText(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%q is not valid UTF-8", s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%q holds a control character", s)
		}
	}
	return nil
}
