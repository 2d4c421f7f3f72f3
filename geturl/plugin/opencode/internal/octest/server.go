package octest

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hubdev/hub/internal/procgroup"
)

// BinEnv names an explicit opencode binary; otherwise `opencode` is looked
// up on PATH.
const BinEnv = "OPENCODE_BIN"

// Binary returns the opencode binary, or skips the test with a message that
// says how to install it.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(BinEnv); p != "" {
		return p
	}
	p, err := exec.LookPath("opencode")
	if err != nil {
		t.Skip("opencode binary not found (npm install -g opencode-ai, or set " + BinEnv + "); skipping the real-server test")
	}
	return p
}

// Options shape one server.
type Options struct {
	// Password turns on OpenCode's Basic auth (OPENCODE_SERVER_PASSWORD).
	Password string
	// Permission is the config's "permission" block, e.g. {"bash":"ask"}.
	Permission map[string]any
	// Script is the fake model; nil means Script.
	Script func(ChatRequest) Reply
}

// Server is one running `opencode serve`.
type Server struct {
	URL      string // http://127.0.0.1:<port>
	Project  string // a canonical directory the server was started in
	Home     string
	Provider *Provider
	// Model is the configured "provider/model".
	Model  string
	cmd    *exec.Cmd
	logs   *logBuffer
	exited chan struct{}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start runs `opencode serve --port 0` in a fresh temp HOME with the fake
// provider as its only model, and stops it when the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin := Binary(t)
	p := NewProvider(t, o.Script)
	base := t.TempDir()
	base, _ = filepath.EvalSymlinks(base)
	home := filepath.Join(base, "home")
	project := filepath.Join(base, "project")
	cfgDir := filepath.Join(home, ".config", "opencode")
	for _, d := range []string{project, cfgDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := map[string]any{
		"$schema":           "https://opencode.ai/config.json",
		"model":             "fake/fake-model",
		"small_model":       "fake/fake-model",
		"enabled_providers": []string{"fake"},
		"autoupdate":        false,
		"share":             "disabled",
		"lsp":               false,
		"formatter":         false,
		"provider": map[string]any{"fake": map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "Fake",
			"options": map[string]any{"baseURL": p.URL, "apiKey": "test-key"},
			"models": map[string]any{"fake-model": map[string]any{
				"name": "Fake Model", "tool_call": true,
				"limit": map[string]any{"context": 100000, "output": 4096},
			}},
		}},
	}
	if o.Permission != nil {
		cfg["permission"] = o.Permission
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(filepath.Join(cfgDir, "opencode.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	// A minimal environment: the user's API keys must not enable real
	// providers, and nothing may try the network.
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		"OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_CLAUDE_CODE=1",
		"OPENCODE_DISABLE_EXTERNAL_SKILLS=1",
	}
	if o.Password != "" {
		env = append(env, "OPENCODE_SERVER_PASSWORD="+o.Password)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	// --port 0 makes opencode try 4096 first, which may be a real server;
	// an explicit free port keeps the test off it.
	cmd := exec.Command(bin, "serve", "--port", strconv.Itoa(port), "--hostname", "127.0.0.1", "--pure")
	cmd.Dir = project
	cmd.Env = env
	cmd.SysProcAttr = procgroup.Attr()
	stderr := &logBuffer{}
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), Project: project, Home: home, Provider: p, Model: "fake/fake-model", cmd: cmd, logs: stderr}
	t.Cleanup(s.stop)
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.exited = exited
	// opencode writes its "listening" line late and buffered; polling the
	// health route is the reliable readiness signal. Any HTTP answer (200,
	// or 401 with a password) means the server is up.
	deadline := time.Now().Add(90 * time.Second)
	probe := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := probe.Get(s.URL + "/global/health")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("opencode serve exited during startup:\n%s", stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("opencode serve not ready within 90s:\n%s", stderr.String())
		}
	}
	return s
}

// Logs is the server's stderr so far.
func (s *Server) Logs() string { return s.logs.String() }

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

func (s *Server) stop() {
	if s.cmd.Process == nil {
		return
	}
	// The process group: opencode may have started tool children.
	procgroup.End(s.cmd.Process, false)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		procgroup.End(s.cmd.Process, true)
		<-s.exited
	}
}
