//go:build linux

package terminal

import (
	"context"
	"os/exec"
	"testing"

	"github.com/hubdev/hub/internal/cputime"
)

// BenchmarkForegroundTrue is one foreground round trip of `true`:
// validation (guard rail, cwd), the gate, spawning /bin/sh with a filtered
// environment in its own session, reading its (empty) output, the group
// sweep and the reap. cpu-µs/op counts the hub and its children.
func BenchmarkForegroundTrue(b *testing.B) {
	f := newFixture(b, Config{})
	ctx := context.Background()
	b.ReportAllocs()
	done := cputime.Start(b)
	for b.Loop() {
		job, err := f.r.Start(ctx, Request{Command: "true"})
		if err != nil {
			b.Fatal(err)
		}
		res, err := job.Wait(ctx)
		if err != nil || res.ExitCode != 0 {
			b.Fatal(err, res)
		}
	}
	done()
}

// BenchmarkCatastrophic is the guard rail on a typical command line.
func BenchmarkCatastrophic(b *testing.B) {
	cmd := `cd web && npm ci && npm run build 2>&1 | tail -n 50; go test ./... && rm -rf dist/tmp`
	b.ReportAllocs()
	b.SetBytes(int64(len(cmd)))
	done := cputime.Start(b)
	for b.Loop() {
		if _, bad := Catastrophic(cmd); bad {
			b.Fatal("refused")
		}
	}
	done()
}

// BenchmarkDetectURLs is detection on a Vite-sized startup transcript.
func BenchmarkDetectURLs(b *testing.B) {
	text := stripANSI(fakeViteOutput)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	done := cputime.Start(b)
	for b.Loop() {
		if urls, _ := DetectURLs(text); len(urls) != 1 {
			b.Fatal(urls)
		}
	}
	done()
}

const fakeViteOutput = "\n> web@0.0.0 dev\n> vite\n\n\n  \x1b[32m\x1b[1mVITE\x1b[22m v5.4.2\x1b[39m  \x1b[2mready in \x1b[0m\x1b[1m312\x1b[22m\x1b[2m\x1b[0m ms\x1b[22m\n\n" +
	"  \x1b[32m➜\x1b[39m  \x1b[1mLocal\x1b[22m:   \x1b[36mhttp://localhost:\x1b[1m5173\x1b[22m/\x1b[39m\n" +
	"  \x1b[32m➜\x1b[39m  \x1b[1mNetwork\x1b[22m: \x1b[2muse \x1b[22m\x1b[1m--host\x1b[22m\x1b[2m to expose\x1b[22m\n" +
	"  \x1b[32m➜\x1b[39m  \x1b[2mpress \x1b[22m\x1b[1mh + enter\x1b[22m\x1b[2m to show help\x1b[22m\n"

// BenchmarkChildEnv is the environment filter over a typical environment.
func BenchmarkChildEnv(b *testing.B) {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8", "TERM=xterm-256color",
		"SHELL=/bin/bash", "USER=u", "GOPATH=/home/u/go", "NODE_ENV=development", "GITHUB_TOKEN=ghp_x",
		"AWS_PROFILE=dev", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "EDITOR=vim", "PWD=/home/u", "OLDPWD=/",
		"XDG_RUNTIME_DIR=/run/user/1000", "DATABASE_URL=postgres://a:b@h/d", "COLORTERM=truecolor"}
	b.ReportAllocs()
	done := cputime.Start(b)
	for b.Loop() {
		childEnv(env, nil, "/home/u/app")
	}
	done()
}

// BenchmarkExecBaseline is the floor BenchmarkForegroundTrue stands on:
// os/exec running /bin/sh -c true with nothing around it.
func BenchmarkExecBaseline(b *testing.B) {
	done := cputime.Start(b)
	for b.Loop() {
		if err := exec.Command("/bin/sh", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	done()
}
