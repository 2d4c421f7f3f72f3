package hub

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestDirsFor: XDG on Linux as before; the platform's own places on macOS
// and Windows; an absolute XDG variable wins on every OS, a relative one
// never does.
func TestDirsFor(t *testing.T) {
	const home = "/home/u"
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	j := filepath.Join
	cases := []struct {
		name, goos string
		getenv     func(string) string
		want       Dirs
	}{
		{"linux defaults", "linux", env(),
			Dirs{Home: home, Config: "/home/u/.config/hub", State: "/home/u/.local/state/hub", Log: "/home/u/.local/state/hub", Cache: "/home/u/.cache"}},
		{"linux xdg", "linux", env("XDG_CONFIG_HOME", "/x/c", "XDG_STATE_HOME", "/x/s", "XDG_CACHE_HOME", "/x/k"),
			Dirs{Home: home, Config: "/x/c/hub", State: "/x/s/hub", Log: "/x/s/hub", Cache: "/x/k"}},
		{"linux relative xdg ignored", "linux", env("XDG_STATE_HOME", "rel"),
			Dirs{Home: home, Config: "/home/u/.config/hub", State: "/home/u/.local/state/hub", Log: "/home/u/.local/state/hub", Cache: "/home/u/.cache"}},
		{"freebsd is xdg", "freebsd", env(),
			Dirs{Home: home, Config: "/home/u/.config/hub", State: "/home/u/.local/state/hub", Log: "/home/u/.local/state/hub", Cache: "/home/u/.cache"}},
		{"darwin defaults", "darwin", env(),
			Dirs{Home: home, Config: j(home, "Library", "Application Support", "hub"), State: j(home, "Library", "Application Support", "hub", "state"),
				Log: j(home, "Library", "Logs", "hub"), Cache: j(home, "Library", "Caches")}},
		{"darwin xdg state moves the log too", "darwin", env("XDG_STATE_HOME", "/x/s"),
			Dirs{Home: home, Config: j(home, "Library", "Application Support", "hub"), State: "/x/s/hub", Log: "/x/s/hub", Cache: j(home, "Library", "Caches")}},
		{"darwin xdg config and cache", "darwin", env("XDG_CONFIG_HOME", "/x/c", "XDG_CACHE_HOME", "/x/k"),
			Dirs{Home: home, Config: "/x/c/hub", State: j(home, "Library", "Application Support", "hub", "state"), Log: j(home, "Library", "Logs", "hub"), Cache: "/x/k"}},
		{"windows profile variables", "windows", env("LOCALAPPDATA", `C:\Users\u\AppData\Local`, "APPDATA", `C:\Users\u\AppData\Roaming`),
			Dirs{Home: home, Config: j(`C:\Users\u\AppData\Roaming`, "hub"), State: j(`C:\Users\u\AppData\Local`, "hub", "state"),
				Log: j(`C:\Users\u\AppData\Local`, "hub", "logs"), Cache: `C:\Users\u\AppData\Local`}},
		{"windows without profile variables", "windows", env("LOCALAPPDATA", "relative"),
			Dirs{Home: home, Config: j(home, "AppData", "Roaming", "hub"), State: j(home, "AppData", "Local", "hub", "state"),
				Log: j(home, "AppData", "Local", "hub", "logs"), Cache: j(home, "AppData", "Local")}},
		{"windows xdg", "windows", env("LOCALAPPDATA", `C:\L`, "XDG_STATE_HOME", `D:\s`, "XDG_CONFIG_HOME", "/x/c"),
			Dirs{Home: home, Config: "/x/c/hub", State: j(`D:\s`, "hub"), Log: j(`D:\s`, "hub"), Cache: `C:\L`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := DirsFor(tc.goos, home, tc.getenv); got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestLocateFollowsAVerifiedPointer: a client that resolves the default
// dirs finds a hub started with its own XDG_STATE_HOME through the
// pointer the hub published, and only through a pointer and dirs that
// pass every state-file check.
func TestLocateFollowsAVerifiedPointer(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	custom := filepath.Join(t.TempDir(), "hub")
	hubDirs := Dirs{Home: home, State: custom, Log: custom}
	for _, d := range []string{custom} {
		if err := EnsurePrivateDir(d); err != nil {
			t.Fatal(err)
		}
	}
	def := DefaultDirs(home)
	// No pointer: the default dirs.
	if got := Locate(def); got != def {
		t.Fatalf("no pointer: %+v", got)
	}
	unpublish, err := Publish(hubDirs)
	if err != nil {
		t.Fatal(err)
	}
	pointer := filepath.Join(def.State, WhereFileName)
	if fi, err := os.Lstat(pointer); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("pointer: %v %v", fi, err)
	}
	// A pointer to a dir without a hub's state file is not followed.
	if got := Locate(def); got != def {
		t.Fatalf("pointer to a dir without hub.json followed: %+v", got)
	}
	if err := os.WriteFile(filepath.Join(custom, hubStateFile), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := def
	want.State, want.Log = custom, custom
	if got := Locate(def); got != want {
		t.Fatalf("Locate = %+v, want %+v", got, want)
	}
	if got, err := DirsFromEnv(); err != nil || got.State != custom || got.Log != custom {
		t.Fatalf("DirsFromEnv with only HOME = %+v, %v", got, err)
	}
	// An XDG_STATE_HOME of the client's own is never redirected.
	other := t.TempDir()
	t.Setenv("XDG_STATE_HOME", other)
	if got, _ := DirsFromEnv(); got.State != filepath.Join(other, "hub") {
		t.Fatalf("an explicit XDG_STATE_HOME was redirected: %+v", got)
	}

	refused := func(name string, spoil func(), undo func()) {
		t.Helper()
		spoil()
		if got := Locate(def); got != def {
			t.Errorf("%s: pointer followed: %+v", name, got)
		}
		undo()
		if got := Locate(def); got != want {
			t.Fatalf("%s: not followed after undo: %+v", name, got)
		}
	}
	refused("pointer readable by others", func() { os.Chmod(pointer, 0o644) }, func() { os.Chmod(pointer, 0o600) })
	refused("named dir writable by others", func() { os.Chmod(custom, 0o777) }, func() { os.Chmod(custom, 0o700) })
	refused("default dir writable by others", func() { os.Chmod(def.State, 0o777) }, func() { os.Chmod(def.State, 0o700) })
	b, _ := os.ReadFile(pointer)
	refused("pointer is a link", func() {
		os.Rename(pointer, pointer+".real")
		os.Symlink(pointer+".real", pointer)
	}, func() { os.Remove(pointer); os.Rename(pointer+".real", pointer) })
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(custom, link)
	for name, w := range map[string]where{
		"named dir is a link": {State: link, Log: custom},
		"relative dir":        {State: "rel/hub", Log: custom},
		"unclean dir":         {State: custom + "/../hub", Log: custom},
		"no log dir":          {State: custom},
	} {
		nb, _ := json.Marshal(w)
		refused(name, func() { os.WriteFile(pointer, nb, 0o600) }, func() { os.WriteFile(pointer, b, 0o600) })
	}
	// A hub of the default dir itself wins over the pointer.
	os.WriteFile(filepath.Join(def.State, hubStateFile), []byte("{}"), 0o600)
	if got := Locate(def); got != def {
		t.Fatalf("a hub in the default dir was passed over: %+v", got)
	}
	os.Remove(filepath.Join(def.State, hubStateFile))

	// Unpublish removes the pointer only while it names this hub.
	unpublish()
	if _, err := os.Lstat(pointer); !os.IsNotExist(err) {
		t.Fatalf("pointer left after unpublish: %v", err)
	}
	Publish(hubDirs)
	other2 := Dirs{Home: home, State: filepath.Join(t.TempDir(), "hub"), Log: custom}
	un2, _ := Publish(other2)
	unpublish() // stale: names other2 now
	if _, err := os.Lstat(pointer); err != nil {
		t.Fatal("an old hub's unpublish removed the newer hub's pointer")
	}
	un2()
}

// TestPublishInTheDefaultDirLeavesNoPointer: a hub in the default dir is
// found there.
func TestPublishInTheDefaultDirLeavesNoPointer(t *testing.T) {
	home := t.TempDir()
	def := DefaultDirs(home)
	un, err := Publish(def)
	if err != nil {
		t.Fatal(err)
	}
	un()
	if _, err := os.Lstat(filepath.Join(def.State, WhereFileName)); !os.IsNotExist(err) {
		t.Fatalf("pointer written for the default dir: %v", err)
	}
}
