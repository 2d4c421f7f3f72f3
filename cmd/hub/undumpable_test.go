package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/transport"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/internal/nobody"
)

// walkParents is the attack: a terminal command climbs its parents (the
// shell's parent is the reaper, the reaper's the hub) and reads each one's
// argv, environment and memory. The needle it looks for in memory and the
// markers of its report are assembled at run time: the command's own text
// is in the reaper's argv (which the report shows) and in the hub's memory
// (it arrived in a URL), and must match neither. It reads the regions of
// up to 16 MiB, where the stack (with the environment) and the heap are.
const walkParents = `needle="GITHUB_TOK""EN=gh""p_" M=@@
p=$PPID
while [ "$p" -gt 1 ] 2>/dev/null; do
	printf '%spid %s comm %s\n' "$M" "$p" "$(cat /proc/$p/comm)"
	printf '%scmdline %s\n' "$M" "$(tr '\0' ' ' </proc/$p/cmdline)"
	if env=$(tr '\0' '\n' </proc/$p/environ); then printf '%senviron\n%s\n' "$M" "$env"; fi
	if maps=$(cat /proc/$p/maps); then
		printf '%smaps\n' "$M"
		printf '%s\n' "$maps" | while read -r range perms rest; do
			case $perms in r*) ;; *) continue ;; esac
			s=$((0x${range%-*})); e=$((0x${range#*-}))
			[ $((e-s)) -le 16777216 ] || continue # not the race detector's shadow
			if dd if=/proc/$p/mem bs=4096 skip=$((s/4096)) count=$(((e-s)/4096)) 2>/dev/null | grep -aq "$needle"; then
				printf '%sneedle\n' "$M"; break
			fi
		done
	fi
	p=$(sed 's/.*) [A-Za-z] \([0-9]*\) .*/\1/' /proc/$p/stat)
done
printf '%stop\n' "$M"
`

// TestTerminalCannotReadTheHub runs the real thing as an unprivileged
// user: `hub start` with a token in its environment and a project whose
// terminal is on, then walkParents through geturl's /x, then `hub status`
// and `hub stop`. The command must find the reaper's environment (already
// stripped) but neither the hub's environment nor its memory, while the
// hub's argv, which everyone can read, holds no secret; and the hub,
// undumpable, must still be recognised and stopped by its own user.
func TestTerminalCannotReadTheHub(t *testing.T) {
	as := nobody.Lookup(t)
	dir, bin := nobody.Binary(t, "hub") // the test binary is `hub` under that name (TestMain)
	home := filepath.Join(dir, "home")
	for _, d := range []string{home, filepath.Join(home, "proj")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(home, "hub.yaml")
	if err := os.WriteFile(cfg, []byte(`adapters:
  stitchslop: {enabled: false}
  aiui: {enabled: false}
  pixelle: {enabled: false}
  geturl:
    port: 0
    control_port: 0
    projects:
      - {name: proj, root: ~/proj, write: true, terminal: true}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := filepath.Walk(home, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, as.UID, as.GID)
	}); err != nil {
		t.Fatal(err)
	}
	secret := "ghp_" + rand.Text()
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "NO_COLOR=1",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"GITHUB_TOKEN=" + secret}
	hubCmd := func(args ...string) (string, int) {
		cmd := as.Command(bin, args...)
		cmd.Env, cmd.Dir = env, home
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		t.Logf("hub %s: %s%s", strings.Join(args, " "), out.String(), errb.String())
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), 0
	}

	out, code := hubCmd("start", "--config", cfg)
	m := regexp.MustCompile(`hub started \(pid (\d+)\)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("hub start exited %d", code)
	}
	pid, _ := strconv.Atoi(m[1])
	// hub stop returns once the hub let go of its lock; the directory is
	// removed only after the process is gone, which may still write to it.
	t.Cleanup(func() {
		if hub.PIDAlive(pid) {
			hubCmd("stop", "--timeout", "5s") // it checks the pid is the hub
		}
		for deadline := time.Now().Add(15 * time.Second); hub.PIDAlive(pid) && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	})
	state := filepath.Join(home, ".local", "state", "hub")
	control := filepath.Join(state, "geturl", "control.json")
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(control); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatal("geturl never wrote its control file")
		}
	}

	out, code = hubCmd("status")
	if code != 0 || !strings.Contains(out, "hub running (pid "+strconv.Itoa(pid)+",") {
		t.Fatalf("hub status (%d) does not see its own hub: %s", code, out)
	}

	out, code = hubCmd("geturl", "session", "new", "--project", "proj", "--json")
	var session struct{ InitURL string }
	if code != 0 || json.Unmarshal([]byte(out), &session) != nil || session.InitURL == "" {
		t.Fatalf("session new (%d): %s", code, out)
	}
	var init struct{ Bases struct{ M string } }
	if err := json.Unmarshal(get(t, session.InitURL), &init); err != nil || init.Bases.M == "" {
		t.Fatalf("init: %v", err)
	}
	var a struct {
		State  string
		Poll   string
		Result struct {
			ExitCode int
			Output   string
		}
	}
	u := init.Bases.M + "/x?wait=1500&timeout=60&raw=" + transport.Encode(walkParents)
	var body []byte
	for i := 0; i < 100; i++ {
		body = get(t, u)
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatal(err)
		}
		if a.State != "pending" && a.State != "running" {
			break
		}
		u = a.Poll
	}
	report := a.Result.Output
	t.Logf("what the command saw:\n%s", report)
	if a.State != "succeeded" || !strings.Contains(report, "@@top") {
		t.Fatalf("the command did not run to its end: %s", body)
	}
	if strings.Contains(report, secret) || strings.Contains(report, "@@needle") {
		t.Error("the command read the hub's secret")
	}
	seen := map[string]string{} // comm → what the command saw of it
	for _, s := range strings.Split(report, "@@pid ")[1:] {
		if m := regexp.MustCompile(`^\d+ comm (\S+)`).FindStringSubmatch(s); m != nil {
			seen[m[1]] = s
		}
	}
	reaper, hubSeen := seen["hub-reaper"], seen["hub"]
	if !strings.Contains(reaper, "@@environ\n") || !strings.Contains(reaper, "\nPATH=/usr/bin:/bin\n") ||
		!strings.Contains(reaper, "@@maps\n") {
		t.Errorf("the reaper's (stripped) environment or memory was not readable, so the test proves little:\n%s", reaper)
	}
	if !strings.Contains(hubSeen, "@@cmdline "+bin+" run --detached") {
		t.Errorf("the walk did not reach the hub (pid %d):\n%s", pid, report)
	}
	if strings.Contains(hubSeen, "@@environ") || strings.Contains(hubSeen, "@@maps") {
		t.Errorf("the hub's environment or memory map was readable:\n%s", hubSeen)
	}

	out, code = hubCmd("stop")
	if code != 0 || !strings.Contains(out, "hub stopped (pid "+strconv.Itoa(pid)+", gracefully)") {
		t.Fatalf("hub stop (%d): %s", code, out)
	}
}

func get(t *testing.T, u string) []byte {
	t.Helper()
	c := http.Client{Timeout: 60 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v: %s", u, resp.StatusCode, err, b)
	}
	return b
}
