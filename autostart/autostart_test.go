package autostart

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// memStore is a Run value without the registry: the one part of the
// Windows kind that only Windows runs.
type memStore struct {
	data   []byte
	exists bool
	writes int
}

func (m *memStore) Where() string { return `HKCU\` + RunKeyPath + `\` + Label }
func (m *memStore) Read() ([]byte, error) {
	if !m.exists {
		return nil, fs.ErrNotExist
	}
	return slices.Clone(m.data), nil
}
func (m *memStore) Write(b []byte) error {
	m.data, m.exists = slices.Clone(b), true
	m.writes++
	return nil
}
func (m *memStore) Remove() error {
	if !m.exists {
		return fs.ErrNotExist
	}
	m.data, m.exists = nil, false
	return nil
}

// env is a Getenv over a map.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// touch makes an executable file, the hub binary an entry names.
func touch(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFileKinds enables, reports and disables a LaunchAgent and an XDG
// entry in a temporary home: the file each writes, where, with which
// mode, and that every step is idempotent.
func TestFileKinds(t *testing.T) {
	cases := []struct {
		kind Kind
		env  map[string]string
		path string // under home
	}{
		{LaunchAgent, nil, "Library/LaunchAgents/com.github.hubdev.hub.plist"},
		{XDG, nil, ".config/autostart/com.github.hubdev.hub.desktop"},
		{XDG, map[string]string{"XDG_CONFIG_HOME": "relative/ignored"}, ".config/autostart/com.github.hubdev.hub.desktop"},
		{XDG, map[string]string{"XDG_CONFIG_HOME": "@/xdg config"}, "xdg config/autostart/com.github.hubdev.hub.desktop"},
	}
	for _, tc := range cases {
		t.Run(tc.kind.String(), func(t *testing.T) {
			home := t.TempDir()
			e := map[string]string{}
			for k, v := range tc.env {
				e[k] = strings.Replace(v, "@", home, 1)
			}
			m, err := For(tc.kind, Options{Home: home, Getenv: env(e)})
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(home, tc.path)
			if m.Where() != want {
				t.Fatalf("Where() = %s, want %s", m.Where(), want)
			}
			exe := touch(t, filepath.Join(home, "my bin", "hub"))

			st, err := m.Status(exe)
			if err != nil || st.Enabled {
				t.Fatalf("before enable: %+v, %v", st, err)
			}
			changed, err := m.Enable(Entry{Exe: exe})
			if err != nil || !changed {
				t.Fatalf("Enable: %v, %v", changed, err)
			}
			fi, err := os.Stat(want)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o644 {
				t.Errorf("mode %v, want 0644", fi.Mode().Perm())
			}
			first, _ := os.ReadFile(want)
			if !strings.Contains(string(first), "hub") || (tc.kind == XDG && !strings.Contains(string(first), `Exec="`+exe+`" run --detached`)) {
				t.Errorf("entry:\n%s", first)
			}
			// Again: nothing to write.
			if changed, err := m.Enable(Entry{Exe: exe}); err != nil || changed {
				t.Errorf("second Enable: %v, %v", changed, err)
			}
			st, err = m.Status(exe)
			if err != nil || !st.Enabled || !st.ThisBinary || !st.Current || st.Config != "" || st.Problem != "" || st.Off != "" {
				t.Errorf("after enable: %+v, %v", st, err)
			}
			if !slices.Equal(st.Argv, []string{exe, "run", "--detached"}) {
				t.Errorf("argv %q", st.Argv)
			}
			// Through a symlink it is still this binary.
			link := filepath.Join(home, "link-to-hub")
			if err := os.Symlink(exe, link); err != nil {
				t.Fatal(err)
			}
			if st, _ := m.Status(link); !st.ThisBinary || st.Current {
				t.Errorf("asked through a link: ThisBinary %v Current %v, want true false", st.ThisBinary, st.Current)
			}
			// Another binary.
			other := touch(t, filepath.Join(home, "other", "hub"))
			if st, _ := m.Status(other); st.ThisBinary || st.Current {
				t.Errorf("another binary: %+v", st)
			}
			// With a config: rewritten, and status reads it back.
			cfg := filepath.Join(home, "cfg dir", "hub.yaml")
			if changed, err := m.Enable(Entry{Exe: exe, Config: cfg}); err != nil || !changed {
				t.Fatalf("Enable with config: %v, %v", changed, err)
			}
			if st, _ := m.Status(exe); st.Config != cfg || !st.Current || !st.ThisBinary {
				t.Errorf("with config: %+v", st)
			}
			// Disable, twice.
			if removed, err := m.Disable(); err != nil || !removed {
				t.Fatalf("Disable: %v, %v", removed, err)
			}
			if _, err := os.Stat(want); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("still there: %v", err)
			}
			if removed, err := m.Disable(); err != nil || removed {
				t.Errorf("second Disable: %v, %v", removed, err)
			}
			if st, err := m.Status(exe); err != nil || st.Enabled {
				t.Errorf("after disable: %+v, %v", st, err)
			}
			// No temporary files left beside the entry.
			left, _ := os.ReadDir(filepath.Dir(want))
			if len(left) != 0 {
				t.Errorf("left in %s: %v", filepath.Dir(want), left)
			}
		})
	}
}

// TestLaunchAgentEnv: launchd starts agents without the user's shell
// environment, so the plist carries the XDG base directories that are
// set (absolute ones, as the hub reads them) and a PATH with Homebrew's
// prefixes.
func TestLaunchAgentEnv(t *testing.T) {
	home := t.TempDir()
	m, err := For(LaunchAgent, Options{Home: home, Getenv: env(map[string]string{
		"XDG_STATE_HOME": "/Users/me/state", "XDG_CACHE_HOME": "relative", "XDG_CONFIG_HOME": "", "XDG_DATA_HOME": "/not/passed",
	})})
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Render(Entry{Exe: "/opt/hub"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"<key>XDG_STATE_HOME</key>\n\t\t<string>/Users/me/state</string>", "<key>PATH</key>\n\t\t<string>/opt/homebrew/bin:"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in\n%s", want, s)
		}
	}
	for _, not := range []string{"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		if strings.Contains(s, not) {
			t.Errorf("%s passed on:\n%s", not, s)
		}
	}
}

// TestDesktopTurnedOff: a desktop's startup settings turn an entry off in
// the file itself; status says so, and enable turns it back on.
func TestDesktopTurnedOff(t *testing.T) {
	home := t.TempDir()
	m, _ := For(XDG, Options{Home: home})
	exe := touch(t, filepath.Join(home, "hub"))
	if _, err := m.Enable(Entry{Exe: exe}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(m.Where())
	os.WriteFile(m.Where(), append(data, "X-GNOME-Autostart-enabled=false\n"...), 0o644)
	st, err := m.Status(exe)
	if err != nil || !st.Enabled || st.Off != "X-GNOME-Autostart-enabled=false" || !st.ThisBinary || st.Current {
		t.Fatalf("turned off: %+v, %v", st, err)
	}
	if changed, err := m.Enable(Entry{Exe: exe}); err != nil || !changed {
		t.Fatalf("re-enable: %v, %v", changed, err)
	}
	if st, _ := m.Status(exe); st.Off != "" || !st.Current {
		t.Errorf("after re-enable: %+v", st)
	}
}

// TestStatusUnreadable: an entry hub cannot read is reported as enabled
// with the reason, never as this binary; one larger than any entry is an
// error, read no further.
func TestStatusUnreadable(t *testing.T) {
	home := t.TempDir()
	m, _ := For(LaunchAgent, Options{Home: home})
	os.MkdirAll(filepath.Dir(m.Where()), 0o700)
	os.WriteFile(m.Where(), []byte("bplist00garbage"), 0o644)
	st, err := m.Status("/opt/hub")
	if err != nil || !st.Enabled || st.Problem == "" || st.ThisBinary || st.Argv != nil {
		t.Errorf("garbage: %+v, %v", st, err)
	}
	os.WriteFile(m.Where(), []byte(strings.Repeat("x", maxEntry+1)), 0o644)
	if st, err := m.Status("/opt/hub"); err == nil {
		t.Errorf("oversized: %+v", st)
	}
	// Enable replaces it.
	if changed, err := m.Enable(Entry{Exe: "/opt/hub"}); err != nil || !changed {
		t.Errorf("Enable over garbage: %v, %v", changed, err)
	}
}

// TestEnableRefusesLeavesEntry: a path the format cannot carry is refused
// before anything is written; the entry already there stays.
func TestEnableRefusesLeavesEntry(t *testing.T) {
	home := t.TempDir()
	m, _ := For(XDG, Options{Home: home})
	if _, err := m.Enable(Entry{Exe: "/opt/hub"}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(m.Where())
	if _, err := m.Enable(Entry{Exe: `/opt/odd\dir/hub`}); err == nil {
		t.Fatal("a backslash in the path was accepted")
	}
	if after, _ := os.ReadFile(m.Where()); string(after) != string(before) {
		t.Errorf("entry changed:\n%s", after)
	}
}

// TestRunKeyKind runs the Windows kind over a store in memory: the value
// is the quoted command line running `hub start`.
func TestRunKeyKind(t *testing.T) {
	s := &memStore{}
	m := New(RunKey, s, nil)
	exe := `C:\Users\José\AppData\Local\Programs\hub\hub.exe`
	cfg := `C:\Users\José\hub config\hub.yaml`
	if changed, err := m.Enable(Entry{Exe: exe, Config: cfg}); err != nil || !changed {
		t.Fatalf("Enable: %v, %v", changed, err)
	}
	want := `"C:\Users\José\AppData\Local\Programs\hub\hub.exe" start --config "C:\Users\José\hub config\hub.yaml"`
	if string(s.data) != want {
		t.Errorf("value %s\nwant  %s", s.data, want)
	}
	if changed, _ := m.Enable(Entry{Exe: exe, Config: cfg}); changed || s.writes != 1 {
		t.Errorf("second Enable wrote (changed %v, %d writes)", changed, s.writes)
	}
	st, err := m.Status(exe)
	if err != nil || !st.Enabled || !st.ThisBinary || !st.Current || st.Config != cfg {
		t.Errorf("status: %+v, %v", st, err)
	}
	if removed, _ := m.Disable(); !removed || s.exists {
		t.Error("Disable left the value")
	}
	if removed, err := m.Disable(); removed || err != nil {
		t.Errorf("second Disable: %v, %v", removed, err)
	}
}

// TestRunKeyOffWindows: outside Windows there is no registry to open.
func TestRunKeyOffWindows(t *testing.T) {
	if Native == RunKey {
		t.Skip("on Windows")
	}
	if _, err := For(RunKey, Options{Home: t.TempDir()}); err == nil {
		t.Error("For(RunKey) worked without a registry")
	}
}

func TestForNeedsAbsoluteHome(t *testing.T) {
	if _, err := For(XDG, Options{Home: "relative"}); err == nil {
		t.Error("relative home accepted")
	}
}

func TestDescribe(t *testing.T) {
	got := Describe([]string{"/a b/hub", "run", `x"y`, ""})
	if want := `"/a b/hub" run "x\"y" ""`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
