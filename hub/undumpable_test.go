//go:build linux

package hub

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hubdev/hub/internal/nobody"
)

// The helper modes of this test binary, which the tests below start as
// another user. Run as a test, it skips.
func TestHelperProcess(t *testing.T) {
	switch os.Getenv("HUB_TEST_HELPER") {
	case "":
		t.Skip("a helper mode of the test binary, not a test")
	case "hub":
		helperHub()
	case "inspect":
		helperInspect()
	}
	os.Exit(0)
}

// helperHub stands for a running hub: undumpable (unless
// HUB_TEST_DUMPABLE=1), holding a flock on HUB_TEST_LOCK, with a secret
// in its environment. It says "ready" and lives until stdin closes.
func helperHub() {
	if os.Getenv("HUB_TEST_DUMPABLE") != "1" {
		if err := MakeUndumpable(); err != nil {
			fmt.Println("undumpable:", err)
			os.Exit(1)
		}
	}
	f, err := os.OpenFile(os.Getenv("HUB_TEST_LOCK"), os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	}
	if err != nil {
		fmt.Println("lock:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
}

// inspection is what helperInspect saw of a hub.
type inspection struct {
	Alive   bool
	Holders []int
	Exe     string
	Argv    []string
	Err     string
	Environ string // its content, or why it could not be read
}

// helperInspect looks at HUB_TEST_PID the way `hub stop` and `hub status`
// do (supervisor.VerifyHub), and tries its environment, and prints what it
// saw as JSON.
func helperInspect() {
	pid, _ := strconv.Atoi(os.Getenv("HUB_TEST_PID"))
	var in inspection
	in.Alive = PIDAlive(pid)
	if fi, err := os.Stat(os.Getenv("HUB_TEST_LOCK")); err == nil {
		in.Holders, err = FlockHolders(fi)
		if err != nil {
			in.Err = "holders: " + err.Error()
		}
	}
	exe, argv, err := ProcessCommand(pid)
	in.Exe, in.Argv = exe, argv
	if err != nil {
		in.Err = err.Error()
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	in.Environ = string(b)
	if err != nil {
		in.Environ = err.Error()
	}
	json.NewEncoder(os.Stdout).Encode(in)
}

// asNobody runs bin's helper mode as u.
func asNobody(u nobody.User, bin string, env ...string) *exec.Cmd {
	cmd := u.Command(bin, "-test.run=^TestHelperProcess$")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	return cmd
}

// A hub is undumpable, so its own user's other processes — the commands
// its terminal runs among them — can no longer read its environment, and
// `hub stop`'s checks still recognise it: alive, holding its lock, with
// the argv it was started with, the executable being hidden. A dumpable
// process shows both (the control: the test can see the difference).
func TestUndumpableHubAsSeenByItsUser(t *testing.T) {
	u := nobody.Lookup(t)
	dir, bin := nobody.Binary(t, "hub.test")
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(state, u.UID, u.GID); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(state, "hub.lock")
	secret := "ghp_" + rand.Text()
	for _, undumpable := range []bool{true, false} {
		t.Run(fmt.Sprintf("undumpable=%v", undumpable), func(t *testing.T) {
			dumpable := "0"
			if !undumpable {
				dumpable = "1"
			}
			target := asNobody(u, bin, "HUB_TEST_HELPER=hub", "HUB_TEST_LOCK="+lock, "HUB_TEST_DUMPABLE="+dumpable,
				"GITHUB_TOKEN="+secret)
			stdin, _ := target.StdinPipe()
			stdout, _ := target.StdoutPipe()
			target.Stderr = os.Stderr
			if err := target.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { stdin.Close(); target.Process.Kill(); target.Wait() }()
			if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
				t.Fatalf("the target said %q", line)
			}
			pid := target.Process.Pid

			out, err := asNobody(u, bin, "HUB_TEST_HELPER=inspect", "HUB_TEST_LOCK="+lock,
				"HUB_TEST_PID="+strconv.Itoa(pid)).Output()
			var in inspection
			if err != nil || json.Unmarshal(out, &in) != nil {
				t.Fatalf("inspect: %v: %s", err, out)
			}
			if !in.Alive || !slices.Contains(in.Holders, pid) || in.Err != "" {
				t.Fatalf("the hub is not recognised: %+v", in)
			}
			if len(in.Argv) != 2 || in.Argv[0] != bin || in.Argv[1] != "-test.run=^TestHelperProcess$" {
				t.Errorf("argv %q", in.Argv)
			}
			switch {
			case undumpable && (in.Exe != "" || strings.Contains(in.Environ, secret) || !strings.Contains(in.Environ, "permission denied")):
				t.Errorf("an undumpable hub shows its executable %q or environment %q", in.Exe, in.Environ)
			case !undumpable && (in.Exe != bin || !strings.Contains(in.Environ, "GITHUB_TOKEN="+secret)):
				t.Errorf("a dumpable process hides its executable %q or environment %q", in.Exe, in.Environ)
			}
			// Root still sees everything (CAP_SYS_PTRACE).
			if exe, argv, err := ProcessCommand(pid); err != nil || exe != bin || len(argv) != 2 {
				t.Errorf("as root: %q %q %v", exe, argv, err)
			}
		})
	}
}

// Undumpable reads back the flag; the test process itself stays dumpable
// (other tests read its /proc files).
func TestUndumpableReadsTheFlag(t *testing.T) {
	if u, err := Undumpable(); err != nil || u {
		t.Fatalf("a test process reads as undumpable: %v %v", u, err)
	}
}
