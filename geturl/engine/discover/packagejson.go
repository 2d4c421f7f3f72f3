package discover

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// PackageJSON is what /p reports of package.json.
type PackageJSON struct {
	Name           string   `json:"name,omitempty"`
	Version        string   `json:"version,omitempty"`
	PackageManager string   `json:"packageManager,omitempty"`
	Workspaces     bool     `json:"workspaces,omitempty"`
	Scripts        []Script `json:"scripts"`
}

// Script is one package.json script, in file order.
type Script struct {
	Name    string `json:"name"`
	Command string `json:"command"`
}

func (d *Discoverer) packageJSON(p *Project) {
	if p.has("package.json") {
		data, ok := d.readRootFile("package.json")
		if !ok {
			d.warn(p, "package.json could not be read")
		} else if pkg, truncated, err := parsePackageJSON(data); err != nil {
			d.warn(p, "package.json is not valid JSON")
		} else {
			p.Package = pkg
			p.Truncated = p.Truncated || truncated
		}
	}
	p.PackageManager = packageManager(p)
}

func parsePackageJSON(data []byte) (*PackageJSON, bool, error) {
	var top struct {
		Name           any             `json:"name"`
		Version        any             `json:"version"`
		PackageManager any             `json:"packageManager"`
		Workspaces     json.RawMessage `json:"workspaces"`
		Scripts        json.RawMessage `json:"scripts"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, false, err
	}
	str := func(v any) string {
		s, _ := v.(string)
		return clip(s, MaxCommandLen)
	}
	pkg := &PackageJSON{Name: str(top.Name), Version: str(top.Version), PackageManager: str(top.PackageManager),
		Workspaces: len(top.Workspaces) > 0 && string(top.Workspaces) != "null", Scripts: []Script{}}
	truncated := false
	// Decode scripts token by token to keep the author's order.
	dec := json.NewDecoder(bytes.NewReader(top.Scripts))
	if t, err := dec.Token(); err == nil && t == json.Delim('{') {
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				break
			}
			var v any
			if dec.Decode(&v) != nil {
				break
			}
			cmd, ok := v.(string)
			if !ok {
				continue
			}
			if len(pkg.Scripts) == MaxScripts {
				truncated = true
				break
			}
			pkg.Scripts = append(pkg.Scripts, Script{Name: clip(k.(string), MaxCommandLen), Command: clip(cmd, MaxCommandLen)})
		}
	}
	return pkg, truncated, nil
}

// packageManager names the JS package manager: the packageManager field
// ("pnpm@9.1.0" → pnpm), else the lockfile, else npm for a package.json.
func packageManager(p *Project) string {
	if p.Package != nil && p.Package.PackageManager != "" {
		name, _, _ := strings.Cut(p.Package.PackageManager, "@")
		return name
	}
	for _, lf := range []struct{ file, pm string }{
		{"pnpm-lock.yaml", "pnpm"}, {"yarn.lock", "yarn"}, {"bun.lock", "bun"}, {"bun.lockb", "bun"},
		{"package-lock.json", "npm"}, {"deno.json", "deno"}, {"deno.jsonc", "deno"},
	} {
		if p.has(lf.file) {
			return lf.pm
		}
	}
	if p.has("package.json") {
		return "npm"
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
