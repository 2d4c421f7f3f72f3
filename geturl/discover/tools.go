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
	cmd.Env = append(os.Environ(), probeEnv...)
	cmd.WaitDelay = 200 * time.Millisecond
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limited{w: &stdout, n: 4096}, &limited{w: &stderr, n: 4096}
	if err := cmd.Run(); err != nil && ctx.Err() != nil {
		return "" // timed out: not cached, the next call tries again
	}
	v := parseVersion(stdout.String())
	if v == "" {
		v = parseVersion(stderr.String())
	}
	versionCache.Store(key, v)
	return v
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
