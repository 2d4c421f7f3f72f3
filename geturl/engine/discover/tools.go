package discover

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/hub/childenv"
	"github.com/hubdev/hub/internal/procgroup"
)

// Tools are the executables /p looks for on PATH.
var Tools = []string{
	"node", "npm", "npx", "pnpm", "yarn", "bun", "deno", "tsc",
	"go", "python3", "python", "pip3", "pip", "uv", "poetry",
	"cargo", "rustc", "java", "mvn", "gradle",
	"make", "cmake", "gcc", "clang", "git", "rg", "docker",
}

// noVersion are found but not asked: JVM launchers take seconds to start,
// npx is npm's version.
var noVersion = map[string]bool{"java": true, "mvn": true, "gradle": true, "npx": true}

// versionArgs are the arguments that print a version; --version unless
// listed.
var versionArgs = map[string][]string{"go": {"version"}}

// probeEnv keeps version probes from doing more than print: no Go
// toolchain switch, no corepack download, no update check.
var probeEnv = []string{"GOTOOLCHAIN=local", "COREPACK_ENABLE_NETWORK=0",
	"COREPACK_ENABLE_DOWNLOAD_PROMPT=0", "NO_UPDATE_NOTIFIER=1", "NPM_CONFIG_UPDATE_NOTIFIER=false"}

// versionRE finds the first version number in a probe's output: 1.2,
// 1.2.3, go1.22.1 (→ 1.22.1), v20.11.0, 3.12.0rc1.
var versionRE = regexp.MustCompile(`(\d+\.\d+(?:\.\d+)?(?:[-+.]?[0-9A-Za-z]+)*)`)

// versionCache maps executable identity (path, size, mtime) to the
// version it printed, for the life of the process.
var versionCache sync.Map

func (d *Discoverer) tools(ctx context.Context) []Tool {
	names := d.Tools
	if names == nil {
		names = Tools
	}
	out := make([]Tool, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		out[i].Name = name
		path, err := d.lookPath(name)
		if err != nil {
			continue
		}
		out[i].Found = true
		if d.NoVersions || noVersion[name] {
			continue
		}
		wg.Go(func() { out[i].Version = d.version(ctx, name, path) })
	}
	wg.Wait()
	return out
}

// version runs one probe (or answers from the cache) and keeps only the
// version number.
func (d *Discoverer) version(ctx context.Context, name, path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", path, fi.Size(), fi.ModTime().UnixNano())
	if v, ok := versionCache.Load(key); ok {
		return v.(string)
	}
	// One probe of an executable at a time, whoever asks: concurrent /p
	// requests (or one slow tool, never cached) must not multiply processes.
	p, first := probesInFlight.join(key)
	if !first {
		select {
		case <-p.done:
			return p.version
		case <-ctx.Done():
			return ""
		}
	}
	defer probesInFlight.leave(key, p)
	v, ok := d.probe(ctx, name, path)
	if ok {
		versionCache.Store(key, v)
	}
	p.version = v
	return v
}

// probe runs one version probe and keeps only the version number; ok is
// false when it timed out (not to be cached: the next call tries again).
func (d *Discoverer) probe(ctx context.Context, name, path string) (version string, ok bool) {
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 1500 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := versionArgs[name]
	if args == nil {
		args = []string{"--version"}
	}
	cmd := exec.CommandContext(ctx, path, args...)
	// The root directory: no other user can write it and it has no
	// parent. Launchers read config from their working directory and its
	// parents (rustup's rust-toolchain.toml may name a toolchain path whose
	// cargo it runs); in /tmp anyone could plant one, and a read-only /p
	// would run it as us.
	cmd.Dir = "/"
	// The hub's environment without its secrets (childenv): any process
	// of the user can read a probe's.
	cmd.Env = append(childenv.Environ(), probeEnv...)
	cmd.WaitDelay = 200 * time.Millisecond
	// Its own process group, killed whole: a launcher script's child
	// would otherwise outlive a probe cut off at its timeout.
	cmd.SysProcAttr = procgroup.Attr()
	cmd.Cancel = func() error { return procgroup.End(cmd.Process, true) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limited{w: &stdout, n: 4096}, &limited{w: &stderr, n: 4096}
	err := cmd.Run()
	if cmd.Process != nil {
		procgroup.End(cmd.Process, true) // a probe only prints: nothing it started stays
	}
	if err != nil && ctx.Err() != nil {
		return "", false
	}
	v := parseVersion(stdout.String())
	if v == "" {
		v = parseVersion(stderr.String())
	}
	return v, true
}

// inFlight is the probes running now, by executable identity.
type inFlight struct {
	mu sync.Mutex
	m  map[string]*runningProbe
}

type runningProbe struct {
	done    chan struct{}
	version string // set before done is closed
}

var probesInFlight inFlight

// join returns the probe running for key, or starts one (first).
func (f *inFlight) join(key string) (p *runningProbe, first bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.m[key]; p != nil {
		return p, false
	}
	if f.m == nil {
		f.m = map[string]*runningProbe{}
	}
	p = &runningProbe{done: make(chan struct{})}
	f.m[key] = p
	return p, true
}

// leave ends p, handing its version to those who joined it.
func (f *inFlight) leave(key string, p *runningProbe) {
	f.mu.Lock()
	delete(f.m, key)
	f.mu.Unlock()
	close(p.done)
}

// parseVersion takes the first version number on the first non-empty line.
func parseVersion(out string) string {
	for line := range strings.Lines(out) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		return clip(versionRE.FindString(line), 40)
	}
	return ""
}

// limited keeps the first n bytes written and discards the rest (a probe
// that floods its output cannot grow memory).
type limited struct {
	w *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
