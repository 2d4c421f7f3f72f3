package control

import (
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/childenv"
)

// openBrowser hands url to $BROWSER or xdg-open, detached, with its output
// away from our stdout (which belongs to the URL and JSON). The login URL
// is a one-time secret: in argv any local user could read it from
// /proc/<pid>/cmdline and redeem it before the browser does, so the
// browser gets the path of a private page in dir that redirects to it.
// The opener (and a browser it starts, which may run for days) gets our
// environment without its secrets (childenv): any process of the user can
// read theirs. The display, the session bus and XDG_* are no secrets.
func openBrowser(dir, url string) error {
	page, err := RedirectPage(dir, url)
	if err != nil {
		return err
	}
	name := os.Getenv("BROWSER")
	if name == "" {
		name = "xdg-open"
	}
	cmd := exec.Command(name, page)
	cmd.Stdout, cmd.Stderr = nil, nil
	cmd.Env = childenv.Environ()
	if err := cmd.Start(); err != nil {
		os.Remove(page)
		return err
	}
	go cmd.Wait()
	return nil
}

// RedirectPage writes a 0600 page in dir (0700) that sends the browser
// to url, and removes the pages of earlier opens: their login has been
// spent or has expired.
func RedirectPage(dir, url string) (string, error) {
	if err := hub.EnsurePrivateDir(dir); err != nil {
		return "", err
	}
	old, _ := filepath.Glob(filepath.Join(dir, "open-*.html"))
	for _, p := range old {
		if fi, err := os.Lstat(p); err == nil && time.Since(fi.ModTime()) > loginTTL {
			os.Remove(p)
		}
	}
	f, err := os.CreateTemp(dir, "open-*.html") // 0600
	if err != nil {
		return "", err
	}
	u := html.EscapeString(url)
	_, err = fmt.Fprintf(f, "<!doctype html><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"0;url=%s\"><a href=\"%s\">open the geturl control page</a>\n", u, u)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
