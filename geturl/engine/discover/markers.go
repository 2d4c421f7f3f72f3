package discover

import (
	"io"
	"os"
	"path/filepath"
)

// Markers are the root entries that say what a project is. Presence is
// all that is reported (not contents, not symlink targets).
var Markers = []string{
	".git", "README.md", "Makefile", "makefile", "GNUmakefile", "justfile", "Taskfile.yml",
	"Dockerfile", "docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml",
	"package.json", "package-lock.json", "pnpm-lock.yaml", "pnpm-workspace.yaml", "yarn.lock",
	"bun.lock", "bun.lockb", "deno.json", "deno.jsonc", "tsconfig.json", "jsconfig.json",
	"vite.config.ts", "vite.config.js", "vite.config.mjs", "next.config.js", "next.config.mjs",
	"next.config.ts", "webpack.config.js", ".nvmrc", ".node-version",
	"go.mod", "go.work", "Cargo.toml", "Cargo.lock",
	"pyproject.toml", "requirements.txt", "setup.py", "setup.cfg", "Pipfile", "poetry.lock",
	"uv.lock", "tox.ini", ".python-version",
	"pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradlew",
	"CMakeLists.txt", "Gemfile", "composer.json", "mix.exs", ".tool-versions", ".env", ".github",
}

func (d *Discoverer) markers(p *Project) {
	root := d.Scope.Root()
	for _, m := range Markers {
		if _, err := os.Lstat(filepath.Join(root, m)); err == nil {
			p.Markers = append(p.Markers, m)
		}
	}
}

func (p *Project) has(marker string) bool {
	for _, m := range p.Markers {
		if m == marker {
			return true
		}
	}
	return false
}

// readRootFile reads a root file through the sandbox (a symlink out of the
// project is not followed) and at most MaxFileBytes of it.
func (d *Discoverer) readRootFile(name string) ([]byte, bool) {
	r, err := d.Scope.ResolveExisting(name)
	if err != nil {
		return nil, false
	}
	f, err := os.Open(r.Host)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	buf := make([]byte, MaxFileBytes)
	n, _ := io.ReadFull(f, buf)
	return buf[:n], true
}
