package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubdev/hub/supervisor"
)

// TestStartHoldsNoInheritedDescriptor starts a hub from a `hub start`
// that inherited a pipe beyond stderr (a caller's `hub start 4>&1 | cat`,
// a test runner's or make's pipe): the detached hub must not hold it, or
// whoever reads that pipe waits for EOF until the hub exits.
func TestStartHoldsNoInheritedDescriptor(t *testing.T) {
	hubBin, err := exec.LookPath("hub") // testscript.Main put the test binary there
	if err != nil {
		t.Skip("no hub command in PATH")
	}
	home := t.TempDir()
	state := filepath.Join(home, ".local", "state")
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+state, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "NO_COLOR=1")
	cfg := filepath.Join(home, "hub.yaml")
	if err := os.WriteFile(cfg, []byte("adapters:\n  stitchslop: {enabled: false}\n  geturl: {enabled: false}\n  pixelle: {enabled: false}\n  aiui: {port: 0}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hubCmd := func(extra []*os.File, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(hubBin, args...)
		cmd.Env, cmd.ExtraFiles = env, extra
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("hub %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	pipe, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(w.Fd())))
	if err != nil {
		t.Fatal(err)
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	// fd 3 of `hub start` is /dev/null (its own ready pipe takes fd 3 in
	// the hub), fd 4 the write end of the pipe, without close-on-exec.
	hubCmd([]*os.File{devnull, w}, "start", "--config", cfg)
	defer hubCmd(nil, "stop")

	st, err := supervisor.ReadState(filepath.Join(state, "hub"))
	if err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(st.PID) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, _ := os.Readlink("/proc/" + strconv.Itoa(st.PID) + "/fd/" + fd.Name()); target == pipe {
			t.Errorf("the detached hub (pid %d) holds the caller's %s as fd %s", st.PID, pipe, fd.Name())
		}
	}
}
