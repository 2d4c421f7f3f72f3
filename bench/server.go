package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/supervisor"
)

// Server is one process under measurement.
type Server struct {
	// Kind names what runs: "hub", "node", "bare".
	Kind string
	// Home is the private HOME (and XDG base) the process runs in.
	Home string
	// Ports is each adapter's (or the reference's one) bound port by
	// name; a reference server is under "".
	Ports map[string][]int
	// Dirs is each adapter's Status.Dir (stitchslop's config dir).
	Dirs map[string]string
	// Env is the process's environment, for CLI commands run beside it.
	Env []string
	// Bin is the hub binary, for those commands.
	Bin string

	// pairing is a reference stitchslop's pairing secret, once paired.
	pairing string
	// geturl is the project and session the geturl loads share.
	geturl *geturlSession

	cmd    *exec.Cmd
	stderr *tailBuffer
	done   chan struct{}
}

// PID is the server process's id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Port is name's first port.
func (s *Server) Port(name string) int {
	if p := s.Ports[name]; len(p) > 0 {
		return p[0]
	}
	return 0
}

// Usage reads the server's usage now.
func (s *Server) Usage() (Usage, error) { return ReadUsage(s.PID()) }

// Stop ends the process (SIGINT, then kill after 5 s) and waits for it.
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	interrupt(s.cmd.Process)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// Hub runs a hub process: the runtime knobs under test plus the adapter
// sections of hub.yaml.
type Hub struct {
	Bin string // the built cmd/hub
	// Adapters is the `adapters:` section's body, YAML indented two spaces
	// (one adapter section per line group); adapters not named are
	// disabled.
	Adapters map[string]string
	// MaxProcs is runtime.max_procs (0: the default).
	MaxProcs int
	// Env is added to the process's environment (GOGC=..., GOMEMLIMIT=...).
	Env []string
}

// AllAdapters is every adapter the hub has, in the order it starts them.
var AllAdapters = []string{"stitchslop", "aiui", "pixelle", "geturl"}

// StartHub starts `hub run --config` in a fresh HOME under dir and waits
// until every enabled adapter is listening.
func StartHub(ctx context.Context, dir string, h Hub) (*Server, error) {
	home, err := os.MkdirTemp(dir, "hub-")
	if err != nil {
		return nil, err
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "log:\n  level: warn\nlifecycle:\n  no_page_minutes: 0\n  agent_idle_minutes: 0\n  shutdown_seconds: 2\nruntime:\n  max_procs: %d\nadapters:\n", h.MaxProcs)
	for _, name := range AllAdapters {
		sec, ok := h.Adapters[name]
		if !ok {
			fmt.Fprintf(&cfg, "  %s:\n    enabled: false\n", name)
			continue
		}
		fmt.Fprintf(&cfg, "  %s:\n    enabled: true\n", name)
		for line := range strings.Lines(sec) {
			if strings.TrimSpace(line) != "" {
				cfg.WriteString("    " + strings.TrimSpace(line) + "\n")
			}
		}
	}
	cfgPath := filepath.Join(home, "hub.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o600); err != nil {
		return nil, err
	}
	env := isolatedEnv(home, h.Env)
	s := &Server{Kind: "hub", Home: home, Env: env, Bin: h.Bin, Ports: map[string][]int{}, Dirs: map[string]string{}}
	if err := s.start(env, h.Bin, "run", "--config", cfgPath); err != nil {
		return nil, err
	}
	state := filepath.Join(home, "state", "hub")
	for {
		st, err := supervisor.ReadState(state)
		if err == nil && st.PID == s.PID() && allUp(st.Adapters, h.Adapters) {
			for _, a := range st.Adapters {
				s.Ports[a.Name], s.Dirs[a.Name] = a.Ports, a.Dir
			}
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("hub exited before it was ready: %s", s.stderr)
		case <-ctx.Done():
			s.Stop()
			return nil, fmt.Errorf("hub not ready: %w (%s)", ctx.Err(), s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func allUp(st []adapters.Status, want map[string]string) bool {
	up := 0
	for _, a := range st {
		if _, ok := want[a.Name]; ok && a.State == adapters.StateRunning && len(a.Ports) > 0 {
			up++
		}
	}
	return up == len(want)
}

// isolatedEnv is this process's environment with HOME and the XDG base
// directories moved under home, and extra appended (last wins).
func isolatedEnv(home string, extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GODEBUG":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+home+"/config", "XDG_STATE_HOME="+home+"/state",
		"XDG_CACHE_HOME="+home+"/cache", "XDG_DATA_HOME="+home+"/data")
	return append(env, extra...)
}

// StartRef starts a reference server (kind "node" or "bare"): argv whose
// first stdout line is {"port":N}.
func StartRef(ctx context.Context, dir, kind string, env []string, argv ...string) (*Server, error) {
	home, err := os.MkdirTemp(dir, kind+"-")
	if err != nil {
		return nil, err
	}
	s := &Server{Kind: kind, Home: home, Env: isolatedEnv(home, env), Ports: map[string][]int{}}
	out, err := s.startPipe(s.Env, argv[0], argv[1:]...)
	if err != nil {
		return nil, err
	}
	line := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		l, _ := r.ReadString('\n')
		line <- l
		io.Copy(io.Discard, r)
	}()
	select {
	case l := <-line:
		var v struct{ Port int }
		if json.Unmarshal([]byte(l), &v) != nil || v.Port == 0 {
			s.Stop()
			return nil, fmt.Errorf("%s: first line %q, want {\"port\":N} (%s)", argv[0], l, s.stderr)
		}
		s.Ports[""] = []int{v.Port}
		return s, nil
	case <-ctx.Done():
		s.Stop()
		return nil, fmt.Errorf("%s not ready: %w (%s)", argv[0], ctx.Err(), s.stderr)
	}
}

func (s *Server) start(env []string, bin string, args ...string) error {
	_, err := s.startPipe(env, bin, args...)
	return err
}

func (s *Server) startPipe(env []string, bin string, args ...string) (io.Reader, error) {
	s.cmd = exec.Command(bin, args...)
	s.cmd.Env = env
	s.cmd.Dir = s.Home
	s.stderr = &tailBuffer{}
	s.cmd.Stderr = s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	s.done = make(chan struct{})
	go func() { s.cmd.Wait(); close(s.done) }()
	return out, nil
}

// tailBuffer keeps the last 4 KiB written, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// Build compiles pkg (a package path inside this module, "./cmd/hub")
// into dir and returns the binary's path. It builds as the release does
// (.goreleaser.yaml): no cgo, -trimpath, -s -w. That is the binary users
// download, and its resident memory is what the idle rows measure: a cgo
// build also maps the C library (about 1.5 MiB resident).
func Build(ctx context.Context, dir, pkg string) (string, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, filepath.Base(pkg)+exeSuffix)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// moduleRoot is the directory of this module's go.mod.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("bench: run inside the hub module")
	}
	return filepath.Dir(mod), nil
}

// ModuleRoot is the hub module's directory (where bench/node lives).
func ModuleRoot(ctx context.Context) (string, error) { return moduleRoot(ctx) }
