package tunnel

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/childenv"
	"github.com/hubdev/hub/internal/procgroup"
)

// States of the managed tunnel.
const (
	StateStopped     = "stopped"
	StateStarting    = "starting"
	StateRunning     = "running"
	StateFailed      = "failed"
	StateUnavailable = "unavailable" // no cloudflared on PATH
)

// Status is what the control page and `hub status` show.
type Status struct {
	State  string `json:"state"`
	Origin string `json:"origin,omitempty"` // https://<host>.trycloudflare.com while running
	PID    int    `json:"pid,omitempty"`
	Error  string `json:"error,omitempty"`
	// Binary is the cloudflared that would run ("" when none is on PATH).
	Binary string `json:"binary,omitempty"`
}

// Manager owns at most one cloudflared child.
type Manager struct {
	// Target is the data plane's loopback URL, e.g. http://127.0.0.1:47432.
	Target string
	Log    *slog.Logger
	// Binary overrides the cloudflared looked up on PATH (tests).
	Binary string
	// StartTimeout bounds the wait for the hostname (default 30 s).
	StartTimeout time.Duration

	mu     sync.Mutex
	status Status
	cmd    *exec.Cmd
	done   chan struct{} // closed when the current child has been reaped
	stop   bool          // the current child is being stopped on purpose
}

// ErrUnavailable means there is no cloudflared to run.
var ErrUnavailable = errors.New("cloudflared is not installed (no cloudflared on PATH); install it, or set a public origin (public_origin / --public-origin / GETMCP_PUBLIC_ORIGIN)")

func (m *Manager) binary() string {
	if m.Binary != "" {
		return m.Binary
	}
	p, err := exec.LookPath("cloudflared")
	if err != nil {
		return ""
	}
	return p
}

// Status is a snapshot.
func (m *Manager) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.status
	if st.State == "" {
		st.State = StateStopped
	}
	if st.State == StateStopped || st.State == StateUnavailable || st.State == StateFailed {
		if st.Binary = m.binary(); st.Binary == "" && st.State == StateStopped {
			st.State, st.Error = StateUnavailable, ErrUnavailable.Error()
		}
	}
	return st
}

func (m *Manager) set(st Status) {
	m.status = st
}

// quickURL finds the Quick Tunnel hostname cloudflared prints in its boxed
// banner ("|  https://seasonal-deck-organisms-sf.trycloudflare.com  |").
var quickURL = regexp.MustCompile(`https://[a-z0-9-]+(\.[a-z0-9-]+)*\.trycloudflare\.com`)

// Start launches cloudflared and returns once it printed its public
// hostname (or failed, or StartTimeout passed). A tunnel already running
// is returned as it is.
func (m *Manager) Start(ctx context.Context) (Status, error) {
	bin := m.binary()
	if bin == "" {
		return m.Status(), ErrUnavailable
	}
	m.mu.Lock()
	if m.cmd != nil {
		st := m.status
		m.mu.Unlock()
		return st, nil
	}
	dir, err := os.MkdirTemp("", "hub-cloudflared-")
	if err != nil {
		m.mu.Unlock()
		return m.Status(), err
	}
	// An explicit empty config: cloudflared would otherwise read the user's
	// ~/.cloudflared/config.yml, whose ingress rules break --url mode.
	cfg := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		os.RemoveAll(dir)
		m.mu.Unlock()
		return m.Status(), err
	}
	cmd := exec.Command(bin, "tunnel", "--no-autoupdate", "--config", cfg, "--protocol", "http2", "--url", m.Target)
	cmd.Stdin = nil
	cmd.Env = cloudflaredEnv(os.Environ())
	cmd.SysProcAttr = procgroup.Attr()
	out, err := cmd.StderrPipe()
	if err != nil {
		os.RemoveAll(dir)
		m.mu.Unlock()
		return m.Status(), err
	}
	cmd.Stdout = cmd.Stderr // cloudflared logs to stderr; keep both on one pipe
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		m.set(Status{State: StateFailed, Error: err.Error(), Binary: bin})
		m.mu.Unlock()
		return m.Status(), err
	}
	m.cmd, m.done, m.stop = cmd, make(chan struct{}), false
	m.set(Status{State: StateStarting, PID: cmd.Process.Pid, Binary: bin})
	found := make(chan string, 1)
	done := m.done
	m.mu.Unlock()

	// Under the adapter's panic guard (ctx carries it): a panic while
	// watching the child restarts geturl, not the whole hub.
	hub.Go(ctx, "geturl tunnel watch", func() { m.watch(cmd, out, found, dir, done) })

	timeout := m.StartTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-found:
		return m.Status(), nil
	case <-done:
		st := m.Status()
		return st, fmt.Errorf("cloudflared exited before it printed a hostname: %s", st.Error)
	case <-t.C:
		m.Stop()
		return m.Status(), fmt.Errorf("cloudflared printed no hostname within %s", timeout)
	case <-ctx.Done():
		m.Stop()
		return m.Status(), ctx.Err()
	}
}

// edgeSettings are the cloudflared settings a quick tunnel keeps from the
// environment: how this machine reaches Cloudflare's edge (an IPv6-only
// network, a source address off a VPN), which the hub cannot know.
var edgeSettings = map[string]bool{"TUNNEL_EDGE_IP_VERSION": true, "TUNNEL_EDGE_BIND_ADDRESS": true}

// cloudflaredEnv is the environment cloudflared runs with: env without its
// secrets (childenv.Strip: any process of the user can read a child's
// environment for as long as the tunnel is up), and without cloudflared's
// own settings (TUNNEL_*) but edgeSettings. Like the user's config file,
// they would make it something other than a quick tunnel to Target:
// TUNNEL_HELLO_WORLD or TUNNEL_UNIX_SOCKET another origin, TUNNEL_NAME or
// TUNNEL_HOSTNAME a tunnel on the user's account, TUNNEL_LOGLEVEL=error no
// banner to find the hostname in, TUNNEL_METRICS a listener beyond
// loopback.
func cloudflaredEnv(env []string) []string {
	out := childenv.Strip(env)
	n := 0
	for _, kv := range out {
		name, _, _ := strings.Cut(kv, "=")
		if up := strings.ToUpper(name); !strings.HasPrefix(up, "TUNNEL_") || edgeSettings[up] {
			out[n] = kv
			n++
		}
	}
	return out[:n]
}

// watch reads cloudflared's output for the hostname, reaps the child and
// removes its temporary config.
func (m *Manager) watch(cmd *exec.Cmd, out io.Reader, found chan<- string, dir string, done chan struct{}) {
	defer close(done)
	defer os.RemoveAll(dir)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 4096), 64<<10)
	var tail string
	for sc.Scan() {
		line := sc.Text()
		tail = line
		if u := quickURL.FindString(line); u != "" {
			m.mu.Lock()
			if m.cmd == cmd && m.status.Origin == "" {
				m.set(Status{State: StateRunning, Origin: u, PID: cmd.Process.Pid, Binary: m.status.Binary})
				select {
				case found <- u:
				default:
				}
				m.Log.Info("quick tunnel running", "origin", u, "target", m.Target, "pid", cmd.Process.Pid)
			}
			m.mu.Unlock()
		}
	}
	io.Copy(io.Discard, out)
	err := cmd.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != cmd {
		return
	}
	m.cmd = nil
	if m.stop {
		m.set(Status{State: StateStopped})
		return
	}
	why := "cloudflared exited"
	if err != nil {
		why += ": " + err.Error()
	}
	if tail != "" {
		why += " (last line: " + clip(tail, 200) + ")"
	}
	// The hostname dies with the child: it is never kept or persisted.
	m.set(Status{State: StateFailed, Error: why})
	m.Log.Warn("quick tunnel ended", "why", why)
}

// Stop ends the child this Manager started (its process group: SIGTERM,
// then SIGKILL after five seconds) and waits for it. It never signals
// anything it did not start.
func (m *Manager) Stop() Status {
	m.mu.Lock()
	cmd, done := m.cmd, m.done
	if cmd == nil {
		m.mu.Unlock()
		return m.Status()
	}
	m.stop = true
	m.mu.Unlock()
	procgroup.End(cmd.Process, false)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		procgroup.End(cmd.Process, true)
		<-done
	}
	return m.Status()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
