package control

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The login URL is a one-time secret: in the browser's argv any local
// user could read it (/proc/<pid>/cmdline) and redeem it first. The
// browser gets the path of a private file that redirects to it instead.
func TestOpenBrowserKeepsTheLoginOutOfArgv(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	argv := filepath.Join(t.TempDir(), "argv")
	browser := filepath.Join(t.TempDir(), "browser")
	os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s' \"$*\" > '"+argv+".tmp' && mv '"+argv+".tmp' '"+argv+"'\n"), 0o755)
	t.Setenv("BROWSER", browser)
	const url = "http://127.0.0.1:1/#login=SeCrEt&x=<1>"
	if err := openBrowser(dir, url); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if got, err = os.ReadFile(argv); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the browser was not started")
		}
	}
	if strings.Contains(string(got), "SeCrEt") {
		t.Fatalf("the login token is in the browser's argv: %q", got)
	}
	fi, err := os.Lstat(string(got))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || filepath.Dir(string(got)) != dir {
		t.Fatalf("the browser got %q (%v, %v), want a private file in %s", got, fi, err, dir)
	}
	page, _ := os.ReadFile(string(got))
	if !strings.Contains(string(page), `url=http://127.0.0.1:1/#login=SeCrEt&amp;x=&lt;1&gt;`) {
		t.Fatalf("redirect page: %s", page)
	}
}

// The browser opener, and a browser it starts, is dumpable: any process of
// the user can read its /proc/<pid>/environ. It gets the environment
// without secrets, and keeps what opening a browser needs (the display,
// the session bus, XDG_*).
func TestOpenBrowserEnvironment(t *testing.T) {
	for _, how := range []string{"xdg-open", "$BROWSER"} {
		t.Run(how, func(t *testing.T) {
			bin := t.TempDir()
			dump := filepath.Join(t.TempDir(), "env")
			script := "#!/bin/sh\nenv > '" + dump + ".tmp' && mv '" + dump + ".tmp' '" + dump + "'\n"
			name := filepath.Join(bin, "xdg-open")
			if how == "$BROWSER" {
				name = filepath.Join(bin, "browser")
				t.Setenv("BROWSER", name)
			} else {
				t.Setenv("BROWSER", "")
			}
			if err := os.WriteFile(name, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			keep := map[string]string{
				"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "XDG_RUNTIME_DIR": "/run/user/1000",
				"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus", "XAUTHORITY": "/home/u/.Xauthority",
				"HOME": "/home/u", "LANG": "C.UTF-8",
			}
			for k, v := range keep {
				t.Setenv(k, v)
			}
			t.Setenv("GITHUB_TOKEN", "ghp_secret1abcdefgh")
			t.Setenv("OPENAI_API_KEY", "secret2")
			t.Setenv("PROXY_URL", "http://u:secret3@proxy:3128")
			if err := openBrowser(filepath.Join(t.TempDir(), "state"), "http://127.0.0.1:1/#login=x"); err != nil {
				t.Fatal(err)
			}
			var env []byte
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				var err error
				if env, err = os.ReadFile(dump); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the browser opener was not started")
				}
			}
			// Names only: the test's own environment may hold real secrets.
			lines := strings.Split(string(env), "\n")
			for k, v := range keep {
				if !slices.Contains(lines, k+"="+v) {
					t.Errorf("the browser opener lacks %s", k)
				}
			}
			for _, kv := range lines {
				if name, value, _ := strings.Cut(kv, "="); strings.Contains(value, "secret") {
					t.Errorf("the browser opener got %s", name)
				}
			}
		})
	}
}
