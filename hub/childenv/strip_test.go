package childenv

import (
	"slices"
	"testing"
)

func TestStrip(t *testing.T) {
	env := []string{
		"PATH=/usr/bin", "GITHUB_TOKEN=ghp_x", "HOME=/home/u", "DATABASE_URL=postgres://a:b@h/d",
		"MY_INTERNAL_THING=x", "EMPTY=", "=bad", "NOEQUALS", "LANG=C.UTF-8", "PWD=/srv/hub",
	}
	orig := slices.Clone(env)
	got := Strip(env, "my_internal_*")
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "EMPTY=", "LANG=C.UTF-8", "PWD=/srv/hub"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if !slices.Equal(env, orig) {
		t.Fatalf("Strip modified its input: %q", env)
	}
}

// What the hub's children need to work (a browser opener on X11, Wayland
// and D-Bus; cloudflared's edge settings; a shell's locale and temp dir)
// is not taken for a secret, with the values a desktop session sets.
func TestStripKeepsWhatChildrenNeed(t *testing.T) {
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/u", "USER=u", "SHELL=/bin/bash", "LANG=en_US.UTF-8",
		"LC_ALL=C.UTF-8", "TERM=xterm-256color", "TMPDIR=/tmp", "XDG_RUNTIME_DIR=/run/user/1000",
		"XDG_CONFIG_HOME=/home/u/.config", "XDG_DATA_DIRS=/usr/local/share:/usr/share", "XDG_SESSION_TYPE=wayland",
		"XDG_CURRENT_DESKTOP=GNOME", "DISPLAY=:0", "WAYLAND_DISPLAY=wayland-0", "XAUTHORITY=/run/user/1000/.mutter-Xwaylandauth.ABC123",
		"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus,guid=0123456789abcdef0123456789abcdef",
		"BROWSER=firefox", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "HTTPS_PROXY=http://proxy:3128", "NO_PROXY=localhost,127.0.0.1",
		"TUNNEL_EDGE_IP_VERSION=auto", "GOTOOLCHAIN=local",
	}
	if got := Strip(env); !slices.Equal(got, env) {
		t.Fatalf("needed variables stripped:\ngot  %q\nwant %q", got, env)
	}
}

// Environ is the hub's own environment, stripped.
func TestEnviron(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp_abcdefghijklmnop")
	t.Setenv("CHILDENV_TEST_KEPT", "ordinary")
	got := Environ()
	if slices.ContainsFunc(got, func(kv string) bool { return kv == "GITHUB_TOKEN=ghp_abcdefghijklmnop" }) {
		t.Fatal("Environ kept GITHUB_TOKEN")
	}
	if !slices.Contains(got, "CHILDENV_TEST_KEPT=ordinary") {
		t.Fatal("Environ lost an ordinary variable")
	}
}
